package onlambda

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/logging"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/notify"
	"github.com/gifq/webhooks/shared/notifymail"
)

func fromEnv(t *testing.T, extra map[string]string) (*app.App, *bytes.Buffer) {
	t.Helper()
	env := map[string]string{"TABLE_NAME": "t", "QUEUE_URL": "http://127.0.0.1:1/q", "DLQ_URL": "http://127.0.0.1:1/dlq",
		"KMS_KEY_ID": "alias/gifq-test", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_CA_BUNDLE": ""}
	for k, v := range extra {
		env[k] = v
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out bytes.Buffer
	a, err := FromEnv(context.Background(), "deliver", &out)
	if err != nil {
		t.Fatal(err)
	}
	return a, &out
}

// In Lambda the SDK's own warnings are JSON lines of the function, like its
// other logs, not the SDK's plain-text default.
func TestFromEnvGivesTheSDKTheFunctionsLogger(t *testing.T) {
	a, out := fromEnv(t, nil)
	a.SQS.(*sqs.Client).Options().Logger.Logf(logging.Warn, "failed to close HTTP response body")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("the SDK's warning is not one JSON line: %q", out.String())
	}
	if line["level"] != "WARN" || line["function"] != "deliver" || line["source"] != "aws-sdk" {
		t.Errorf("line %v: want level WARN, function deliver, source aws-sdk", line)
	}
}

// AWS_CA_BUNDLE (a TLS-inspecting proxy's certificate, LocalStack behind
// TLS) is honoured: the SDK adds it only to its own client type, which the
// one-write wrapper hid, and the functions failed at start.
func TestFromEnvTrustsAWSCABundle(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _ := fromEnv(t, map[string]string{"AWS_CA_BUNDLE": bundle})
	client := a.SQS.(*sqs.Client).Options().HTTPClient
	if _, ok := client.(app.OneWrite); !ok {
		t.Errorf("HTTP client %T: want the one-write wrapper", client)
	}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a server signed by the bundle's certificate: %v", err)
	}
	resp.Body.Close()
}

// The functions that handle signing secrets refuse to start without the key
// that seals them; the others do not need it.
func TestSealingFunctionsNeedAKMSKey(t *testing.T) {
	for _, fn := range []string{"api", "deliver"} {
		t.Setenv("KMS_KEY_ID", "")
		t.Setenv("TABLE_NAME", "t")
		t.Setenv("QUEUE_URL", "q")
		t.Setenv("DLQ_URL", "d")
		if _, err := FromEnv(context.Background(), fn, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "KMS_KEY_ID") {
			t.Errorf("%s started without KMS_KEY_ID: %v", fn, err)
		}
	}
	for _, fn := range []string{"sweeper", "redrive"} {
		if err := needsKMS(fn, ""); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
	}
}

// The functions' DynamoDB client resolves its endpoint through the cache.
func TestFunctionsDynamoDBClientCachesEndpoints(t *testing.T) {
	r := newDynamoDB(aws.Config{Region: "us-east-1"}).Options().EndpointResolverV2
	if got := fmt.Sprintf("%T", r); got != "*app.dynamoDBEndpoints" {
		t.Errorf("the DynamoDB client resolves its endpoint with %s, on every call", got)
	}
}

// Notices are mailed only when the deployment names a sender: then the
// worker's notifier mails through SES from it; a sender that is not a plain
// address stops the function at start.
func TestFromEnvMailsNoticesOnlyWithASender(t *testing.T) {
	if a, _ := fromEnv(t, nil); MailNotices(a).Worker().Events.(*notify.Notifier).Mail != nil {
		t.Fatal("notices are mailed without NOTIFY_EMAIL_FROM")
	}
	a, _ := fromEnv(t, map[string]string{"NOTIFY_EMAIL_FROM": "notices@gifq.example"})
	if a.Worker().Events.(*notify.Notifier).Mail != nil {
		t.Fatal("a function other than deliver (no MailNotices) mails notices")
	}
	MailNotices(a)
	m, ok := a.Worker().Events.(*notify.Notifier).Mail.(*notifymail.Sender)
	if !ok || m.From != "notices@gifq.example" || m.SES == nil || m.Store == nil || m.Log == nil {
		t.Fatalf("mailer %#v", a.Worker().Events.(*notify.Notifier).Mail)
	}
	t.Setenv("NOTIFY_EMAIL_FROM", "Notices <notices@gifq.example>")
	if _, err := FromEnv(context.Background(), "deliver", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "NOTIFY_EMAIL_FROM") {
		t.Fatalf("a display name in NOTIFY_EMAIL_FROM: %v", err)
	}
}
