package emulator

import (
	"context"
	"net"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// The KMS emulator listens on loopback only, keeps its keys in its data
// folder across restarts, and answers the SDK's calls.
func TestKMSEmulatorOnLoopbackKeepsItsKeys(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	first, err := StartKMS(ctx, "", data)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(first.URL)
	if host, _, _ := net.SplitHostPort(u.Host); host != "127.0.0.1" {
		first.Stop()
		t.Fatalf("the KMS emulator listens on %s, want loopback", u.Host)
	}
	arn, err := EnsureKey(ctx, KMSClient(first.URL), "alias/gifq-test")
	if err != nil {
		first.Stop()
		t.Fatal(err)
	}
	first.Stop()

	again, err := StartKMS(ctx, "", data)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	c := KMSClient(again.URL)
	same, err := EnsureKey(ctx, c, "alias/gifq-test")
	if err != nil || same != arn {
		t.Fatalf("after a restart the alias names %q (%v), want %q", same, err, arn)
	}
	out, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String("alias/gifq-test"), KeySpec: types.DataKeySpecAes256})
	if err != nil || len(out.Plaintext) != 32 {
		t.Fatalf("GenerateDataKey: %v", err)
	}
	dec, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: out.CiphertextBlob})
	if err != nil || string(dec.Plaintext) != string(out.Plaintext) {
		t.Fatalf("Decrypt does not give the data key back: %v", err)
	}
}
