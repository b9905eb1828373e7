package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/signing"
)

// An endpoint on v1a, end to end: the API seals its secret under a KMS key
// (the KMS emulator), the worker signs every attempt with the account's
// ed25519 key, and a receiver verifies with nothing but the public JWKS it
// fetched without a key. The endpoint item in the table holds no whsec_.
func TestV1aDeliveriesVerifyWithThePublicJWKS(t *testing.T) {
	localOnly(t)
	t.Parallel()
	h := start(t, opts{kms: true}) // as onlambda.FromEnv does with KMS_KEY_ID
	acct, key := h.account(t)
	rv := h.receiver(t, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n == 1 {
			return 503, "busy" // a retry: every attempt is signed afresh
		}
		return 204, ""
	})
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
		Scheme string `json:"signature_scheme"`
	}
	if code := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": rv.URL, "signature_scheme": "v1a"}, &ep); code != 201 || ep.Scheme != "v1a" {
		t.Fatalf("create: %d %+v", code, ep)
	}
	rv.setSecret(ep.Secret)

	var jwks json.RawMessage
	if code := h.call(t, "", "GET", "/v1/accounts/"+acct+"/jwks.json", nil, &jwks); code != 200 {
		t.Fatalf("JWKS without a key: %d", code)
	}
	keys, err := signing.ParseJWKS(jwks)
	if err != nil || len(keys) != 1 {
		t.Fatalf("JWKS %s: %v", jwks, err)
	}

	ev := h.publish(t, key, payout)
	if d := h.waitFor(t, key, ev.Deliveries[0].ID, 30*time.Second, settled); d.Status != "delivered" || d.AttemptCount != 2 {
		t.Fatalf("delivery %+v", d)
	}
	got := rv.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	for i, r := range got {
		id, ts, sig := r.header.Get(signing.HeaderWebhookID), r.header.Get(signing.HeaderWebhookTimestamp), r.header.Get(signing.HeaderWebhookSignature)
		if err := signing.VerifyStandardV1a(r.body, id, ts, sig, signing.PublicKeys(keys), signing.Options{}); err != nil {
			t.Errorf("attempt %d: v1a does not verify with the JWKS: %v (%q)", i+1, err, sig)
		}
		if err := signing.VerifyStandard(r.body, id, ts, sig, []string{ep.Secret}, signing.Options{}); !errors.Is(err, signing.ErrNoSignatures) {
			t.Errorf("attempt %d: a v1a endpoint got a v1 entry: %v", i+1, err)
		}
		if r.verified != nil {
			t.Errorf("attempt %d: X-Gifq-Signature: %v", i+1, r.verified)
		}
	}

	out, err := h.env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(h.env.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCT#" + acct}, "sk": &types.AttributeValueMemberS{Value: "EP#" + ep.ID}}})
	if err != nil || out.Item == nil {
		t.Fatalf("raw endpoint item: %v", err)
	}
	if raw := fmt.Sprint(out.Item["secrets"]); strings.Contains(raw, "whsec_") || strings.Contains(raw, ep.Secret[6:]) {
		t.Fatalf("the endpoint item holds the secret in plaintext: %s", raw)
	}
}
