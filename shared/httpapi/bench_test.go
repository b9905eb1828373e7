package httpapi_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// BenchmarkIngest is the api function per event: POST /v1/events through
// (*API).Handle, as API Gateway invokes it, against the DynamoDB and SQS
// emulators with the deployed defaults (API key cached, info logs, EMF
// metrics; both to a discarded writer): the account and its endpoint read
// at the same time as the key's ingest limit, the rate-limit reservation,
// the event and delivery write, the queue send. One op is one accepted
// event with one delivery. cpu-ms/op is this process's CPU (user + system,
// getrusage) per event: the handler and the SDK, not the emulators.
func BenchmarkIngest(b *testing.B) {
	env := testenv.New(b)
	cfg := config.Defaults()
	cfg.TableName, cfg.QueueURL, cfg.DLQURL = env.Table, env.Queues.Delivery, env.Queues.DLQ
	cfg.AllowPrivateEndpoints, cfg.AllowedSchemes = true, []string{"http"}
	cfg.RatePerSecond = 1e6 // the handler, not the account's delivery rate
	a := app.New(cfg, env.DB, env.SQS, io.Discard, "api")
	api := a.API()
	acct, err := a.Store.CreateAccount(ctx, "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Store.SetAccountIngestLimit(ctx, acct.ID, ratelimit.Limit{Rate: 1e6, Burst: 1e6}); err != nil {
		b.Fatal(err)
	}
	_, key, err := a.Store.CreateAPIKey(ctx, acct.ID)
	if err != nil {
		b.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	out, _ := api.Handle(ctx, events.APIGatewayProxyRequest{HTTPMethod: http.MethodPost, Path: "/v1/endpoints",
		Body: `{"url":"http://127.0.0.1:9/hook"}`, Headers: auth})
	if out.StatusCode != http.StatusCreated {
		b.Fatalf("create endpoint: %d %s", out.StatusCode, out.Body)
	}
	body := `{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123","amount":"12.50","currency":"USDC","updated_at":"2026-11-30T12:00:00Z"}}`
	in := func(i int) events.APIGatewayProxyRequest {
		return events.APIGatewayProxyRequest{HTTPMethod: http.MethodPost, Path: "/v1/events", Body: body, Headers: auth,
			RequestContext: events.APIGatewayProxyRequestContext{RequestID: "req-" + strconv.Itoa(i)}}
	}
	if out, _ := api.Handle(ctx, in(-1)); out.StatusCode != http.StatusAccepted { // the key is cached from here on
		b.Fatalf("POST /v1/events: %d %s", out.StatusCode, out.Body)
	}
	b.ReportAllocs()
	cpu := testenv.CPUTime()
	i := 0
	for b.Loop() {
		if out, _ := api.Handle(ctx, in(i)); out.StatusCode != http.StatusAccepted {
			b.Fatalf("POST /v1/events: %d %s", out.StatusCode, out.Body)
		}
		i++
	}
	b.ReportMetric(float64(testenv.CPUTime()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
