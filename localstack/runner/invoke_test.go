package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/onboard"
	"github.com/gifq/webhooks/shared/redrive"
	"github.com/gifq/webhooks/shared/sweep"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Every sample event in events/ goes through its function's handler the way
// make invoke (and the Lambda runtime) sends it: as JSON.
func TestSampleEventsInvokeTheirFunctions(t *testing.T) {
	env := testenv.New(t)
	vars := map[string]string{"TABLE_NAME": env.Table, "QUEUE_URL": env.Queues.Delivery, "DLQ_URL": env.Queues.DLQ, "METRICS": "off"}
	cfg, err := config.Parse(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := app.New(cfg, env.DB, env.SQS, &logs, "test")
	ctx := context.Background()
	acct, err := a.Store.CreateAccount(ctx, "samples", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := a.Store.CreateAPIKey(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(fn, file string, out any) {
		t.Helper()
		ev, err := os.ReadFile("../../events/" + file)
		if err != nil {
			t.Fatal(err)
		}
		ev = bytes.ReplaceAll(ev, []byte("${DEV_API_KEY}"), []byte(key))
		res, err := runner.Invoke(ctx, a, fn, ev)
		if err != nil {
			t.Fatalf("%s %s: %v", fn, file, err)
		}
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("%s %s: %s: %v", fn, file, res, err)
		}
	}
	// httpapi-post-event.json is the event an HTTP API (api=http) sends in
	// payload format 1.0: lower-case headers, a "version", stage $default.
	for file, want := range map[string]int{"api-healthz.json": 200, "api-post-event.json": 202, "api-list-endpoints.json": 200,
		"httpapi-post-event.json": 202} {
		var resp events.APIGatewayProxyResponse
		invoke("api", file, &resp)
		if resp.StatusCode != want {
			t.Errorf("%s: %d %s", file, resp.StatusCode, resp.Body)
		}
	}
	var batch events.SQSEventResponse
	invoke("deliver", "deliver-sqs.json", &batch)
	if len(batch.BatchItemFailures) != 0 {
		t.Errorf("messages for unknown deliveries must be dropped, not retried: %+v", batch)
	}
	var sw sweep.Result
	invoke("sweeper", "sweeper.json", &sw)
	if !sw.Complete || sw.Found != 0 {
		t.Errorf("sweep of an idle system: %+v", sw)
	}
	var rd redrive.Response
	invoke("redrive", "redrive.json", &rd)
	if !rd.DryRun || rd.Examined != 0 {
		t.Errorf("redrive of an empty DLQ: %+v", rd)
	}
	var ob onboard.Response
	invoke("ops", "ops-create-account.json", &ob)
	if ob.AccountID == "" || ob.APIKey == "" || ob.Name != "acme" {
		t.Errorf("ops: %+v", ob)
	}
	if bytes.Contains(logs.Bytes(), []byte(key)) || bytes.Contains(logs.Bytes(), []byte(ob.APIKey)) {
		t.Fatal("an API key appeared in the logs")
	}
}
