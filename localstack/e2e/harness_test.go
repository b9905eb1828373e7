// Package e2e drives the whole system through its HTTP API: a producer posts
// events, receivers on loopback answer as each test scripts, and the tests
// read the delivery log and the DLQ. By default it runs every function in
// this process against the emulators (package runner); with E2E_API_URL set
// it runs against a deployed stack instead (LocalStack: see docs/deploy.md).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/apiclient"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/destination/providers"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) {
	if remote() {
		m.Run()
		return
	}
	testenv.Main(m)
}

// unlimitedIngest lifts the per-key ingest limit: tests post thousands of
// events from one key; the limit's own tests set theirs per key
// (ingestlimit_test.go).
var unlimitedIngest = map[string]string{"INGEST_RATE_PER_SECOND": "100000", "INGEST_BURST": "1000000"}

func remote() bool { return os.Getenv("E2E_API_URL") != "" }

var ctx = context.Background()

// opts are a local run's settings; a remote stack has its own.
type opts struct {
	stats bool // run the stats function's stream mapping
	// no scheduler (the sweeper's minute run for parked deliveries): it
	// ticks on the wall clock's minutes, and a test counting one delivery's
	// calls would count its queries whenever it spans a minute's turn
	noScheduler bool
	retry       string // RETRY_SCHEDULE
	rate        float64
	maxInFlight int
	sweepEvery  time.Duration
	sweepGrace  time.Duration
	wrapSQS     func(app.SQS) app.SQS // fault injection
	calls       *testenv.Calls        // count the app's AWS calls
	env         map[string]string     // any other setting
	logs        io.Writer             // also receives the app's log lines
	kms         bool                  // seal secrets under a key of the KMS emulator, as deployed (docs/signing.md)
	awsDest     *aws.Config           // deliver to AWS destinations through this config (LocalStack)
	pollers     int                   // the delivery queue's concurrent invocations (runner.Options.Pollers)
	slowPollers int                   // the slow lane's
	paced       int                   // the paced lane's
}

// harness is one test's system.
type harness struct {
	api      string
	store    *store.Store
	sqs      *sqs.Client
	queueURL string
	dlqURL   string
	local    *runner.Local
	app      *app.App
	recvHost string
	env      *testenv.Env // local runs only
	db       *dynamodb.Client
	table    string
	attempts int     // the retry schedule's attempts: opts.retry locally, the stack's when deployed
	slower   float64 // waitFor's timeouts are this many times longer (a deployed stack: E2E_TIMEOUT_SCALE)
	logFrom  int64   // a deployed stack: the size of E2E_FUNCTION_LOG when the test started
}

func start(t *testing.T, o opts) *harness {
	t.Helper()
	if remote() {
		return remoteHarness(t)
	}
	newEnv := testenv.New
	if o.stats {
		newEnv = testenv.NewWithStream
	}
	env := newEnv(t)
	env2 := map[string]string{
		"TABLE_NAME": env.Table, "QUEUE_URL": env.Queues.Delivery, "SLOW_QUEUE_URL": env.Queues.Slow, "PACED_QUEUE_URL": env.Queues.Paced, "DLQ_URL": env.Queues.DLQ,
		"ALLOW_PRIVATE_ENDPOINTS": "true", "ALLOWED_SCHEMES": "http,https", "METRICS": "off", "LOG_LEVEL": "warn",
		"RETRY_SCHEDULE": "1s,1s,1s,1s,1s,1s,1s", "SWEEP_GRACE": "2s", "DELIVERY_TIMEOUT": "10s",
	}
	maps.Copy(env2, unlimitedIngest)
	if o.retry != "" {
		env2["RETRY_SCHEDULE"] = o.retry
	}
	if o.rate > 0 {
		env2["RATE_LIMIT_PER_SECOND"] = fmt.Sprint(o.rate)
	}
	if o.maxInFlight != 0 {
		env2["ENDPOINT_MAX_IN_FLIGHT"] = fmt.Sprint(max(o.maxInFlight, 0))
	}
	if o.sweepGrace > 0 {
		env2["SWEEP_GRACE"] = o.sweepGrace.String()
	}
	for k, v := range o.env {
		env2[k] = v
	}
	cfg, err := config.Parse(func(k string) string { return env2[k] })
	if err != nil {
		t.Fatal(err)
	}
	var db store.DynamoDB = env.DB
	var q app.SQS = env.SQS
	if o.calls != nil {
		db, q = env.CountedClients(o.calls)
	}
	if o.wrapSQS != nil {
		q = o.wrapSQS(q)
	}
	var logw io.Writer = testLog{t}
	if o.logs != nil {
		logw = io.MultiWriter(logw, o.logs)
	}
	a := app.New(cfg, db, q, logw, "local")
	if o.kms {
		k, keyID := testenv.KMS(t)
		a.UseKMS(k, keyID)
	}
	if o.awsDest != nil {
		providers.UseAWS(a.Destinations, *o.awsDest, a.Config.DestinationRegions, a.Config.DeploymentAccount, a.Config.DeliveryTimeout)
	}
	ro := runner.Options{APIAddr: "127.0.0.1:0", SweepEvery: o.sweepEvery, Pollers: o.pollers, SlowPollers: o.slowPollers, PacedPollers: o.paced}
	if o.noScheduler {
		ro.ScheduleEvery = -1
	}
	if o.stats { // the stream poller reads every write: only the tests of the stats run it
		streamARN, err := emulator.TableStream(ctx, env.DB, env.Table)
		if err != nil {
			t.Fatal(err)
		}
		ro.Streams, ro.StreamARN, ro.StatsStore = emulator.StreamsClient(env.DynamoURL), streamARN, store.New(env.DB, env.Table)
	}
	l, err := runner.Start(ctx, a, ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Stop)
	return &harness{api: l.URL, store: store.New(env.DB, env.Table), sqs: env.SQS, queueURL: env.Queues.Delivery, dlqURL: env.Queues.DLQ,
		local: l, app: a, recvHost: "127.0.0.1", env: env, db: env.DB, table: env.Table, attempts: cfg.Retry.MaxAttempts(), slower: 1}
}

func remoteHarness(t *testing.T) *harness {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	host := os.Getenv("E2E_RECEIVER_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	// The deployed stack's schedule (E2E_RETRY_SCHEDULE, set by make
	// localstack-e2e), not the one a test asks for.
	schedule := retry.Default()
	if s := os.Getenv("E2E_RETRY_SCHEDULE"); s != "" {
		if schedule, err = retry.Parse(s); err != nil {
			t.Fatalf("E2E_RETRY_SCHEDULE: %v", err)
		}
	}
	// An emulated stack is slower than this process (LocalStack: one SQS
	// poller, a serialised DynamoDB): longer waits, never other assertions.
	slower := 3.0
	if s := os.Getenv("E2E_TIMEOUT_SCALE"); s != "" {
		if slower, err = strconv.ParseFloat(s, 64); err != nil || slower < 1 {
			t.Fatalf("E2E_TIMEOUT_SCALE=%q: want a number >= 1", s)
		}
	}
	var logFrom int64
	if fi, err := os.Stat(os.Getenv("E2E_FUNCTION_LOG")); err == nil {
		logFrom = fi.Size()
	}
	return &harness{
		logFrom: logFrom,
		api:     strings.TrimSuffix(os.Getenv("E2E_API_URL"), "/"),
		store:   store.New(dynamodb.NewFromConfig(cfg), os.Getenv("E2E_TABLE_NAME")),
		db:      dynamodb.NewFromConfig(cfg), table: os.Getenv("E2E_TABLE_NAME"),
		sqs:      sqs.NewFromConfig(cfg),
		queueURL: os.Getenv("E2E_QUEUE_URL"), dlqURL: os.Getenv("E2E_DLQ_URL"), recvHost: host,
		attempts: schedule.MaxAttempts(), slower: slower,
	}
}

// localOnly marks a test that drives the process itself (kills it, injects
// faults, edits the table): it always runs in make test, and does not apply
// to a deployed stack (E2E_API_URL), where it says so and stops.
func localOnly(t *testing.T) {
	t.Helper()
	if remote() {
		t.Skip("drives the local process; not applicable to a deployed stack")
	}
}

// ownSchedule marks a test whose scenario needs a retry schedule of its
// own (a failed attempt kept pending for an hour, say): a deployed stack has
// the one it was deployed with, so there the test says so and stops.
func ownSchedule(t *testing.T, schedule string) {
	t.Helper()
	if remote() {
		t.Skipf("needs RETRY_SCHEDULE=%s; a deployed stack keeps the schedule it was deployed with", schedule)
	}
}

// executorLine is how LocalStack's log shows a line a function printed
// (localstack/plugin's host executor): "...executor   : [<function> <env>] <line>".
var executorLine = regexp.MustCompile(`gifq_localstack\.executor +: \[\S+ \S+\] (.*)$`)

// functionLogs is what the deployed functions printed since the test
// started, read from LocalStack's log (E2E_FUNCTION_LOG, set by make
// localstack-e2e in host mode); the test stops when there is no such file.
func (h *harness) functionLogs(t *testing.T) string {
	t.Helper()
	path := os.Getenv("E2E_FUNCTION_LOG")
	if path == "" {
		t.Skip("no function log to read (E2E_FUNCTION_LOG): LocalStack in Docker keeps them in its containers")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(h.logFrom, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if m := executorLine.FindStringSubmatch(line); m != nil {
			out.WriteString(m[1] + "\n")
		}
	}
	return out.String()
}

// testLog sends the app's log lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// account creates an account and returns its API key.
func (h *harness) account(t *testing.T) (accountID, key string) {
	t.Helper()
	a, err := h.store.CreateAccount(ctx, "e2e", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err = h.store.CreateAPIKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID, key
}

// call makes an API request and decodes the JSON answer into out (if not nil).
func (h *harness) call(t *testing.T, key, method, path string, body any, out any, hdr ...string) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, h.api+path, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	h.conforms(t, req, resp.StatusCode, resp.Header, raw)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// tryCall posts an event and returns the status, or 0 when the API is not
// reachable (the process is restarting); it does not fail the test.
func (h *harness) tryCall(key, body string, out any, hdr ...string) int {
	resp, err := postEvent(h.client(nil, key), body, hdr...)
	if err != nil {
		return 0
	}
	if resp.JSON202 != nil {
		if ev, ok := out.(*eventOut); ok {
			*ev = fromAccepted(resp.JSON202)
		}
	}
	return resp.StatusCode()
}

type endpointOut struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

func (h *harness) endpoint(t *testing.T, key, url string, eventTypes ...string) endpointOut {
	t.Helper()
	body := apiclient.NewEndpoint{Url: &url}
	if len(eventTypes) > 0 {
		body.EventTypes = &eventTypes
	}
	resp, err := h.client(t, key).CreateEndpointWithResponse(ctx, body)
	if err != nil {
		t.Fatalf("create endpoint: %v", err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create endpoint: %d %s", resp.StatusCode(), resp.Body)
	}
	return endpointOut{ID: resp.JSON201.Id, URL: resp.JSON201.Url, Secret: resp.JSON201.Secret}
}

type eventOut struct {
	ID         string `json:"id"`
	Event      string `json:"event"`
	Deliveries []struct {
		ID         string `json:"id"`
		EndpointID string `json:"endpoint_id"`
	} `json:"deliveries"`
}

func (h *harness) publish(t *testing.T, key, body string, hdr ...string) eventOut {
	t.Helper()
	resp, err := postEvent(h.client(t, key), body, hdr...)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if resp.JSON202 == nil {
		t.Fatalf("publish: %d %s", resp.StatusCode(), resp.Body)
	}
	return fromAccepted(resp.JSON202)
}

type attemptOut struct {
	Kind       string `json:"kind"`
	Number     int    `json:"number"`
	Series     int    `json:"series"`
	StatusCode int    `json:"status_code"`
	ErrorClass string `json:"error_class"`
	Outcome    string `json:"outcome"`
	Response   string `json:"response_body"`
}

type deliveryOut struct {
	ID            string       `json:"id"`
	EndpointID    string       `json:"endpoint_id"`
	Status        string       `json:"status"`
	NextAttemptAt string       `json:"next_attempt_at"`
	AttemptCount  int          `json:"attempt_count"`
	Series        int          `json:"series"`
	LastStatus    int          `json:"last_status"`
	LastError     string       `json:"last_error"`
	FailReason    string       `json:"fail_reason"`
	Attempts      []attemptOut `json:"attempts"`
}

func (h *harness) delivery(t *testing.T, key, id string) deliveryOut {
	t.Helper()
	resp, err := h.client(t, key).GetDeliveryWithResponse(ctx, id)
	if err != nil {
		t.Fatalf("get delivery %s: %v", id, err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("get delivery %s: %d %s", id, resp.StatusCode(), resp.Body)
	}
	// The delivery shows its newest attempts, newest first; the tests read
	// the whole log, oldest first: page through the older ones and turn it.
	d := resp.JSON200
	for cursor := d.AttemptsNextCursor; cursor != nil && *cursor != ""; {
		limit := 100
		page, err := h.client(t, key).ListDeliveryAttemptsWithResponse(ctx, id, &apiclient.ListDeliveryAttemptsParams{Limit: &limit, Cursor: cursor})
		if err != nil || page.JSON200 == nil {
			t.Fatalf("attempts of %s: %v %s", id, err, page.Body)
		}
		d.Attempts = append(d.Attempts, page.JSON200.Data...)
		cursor = &page.JSON200.NextCursor
	}
	slices.Reverse(d.Attempts)
	return fromDelivery(d)
}

// waitFor polls a delivery until done(d) or the timeout.
func (h *harness) waitFor(t *testing.T, key, id string, timeout time.Duration, done func(deliveryOut) bool) deliveryOut {
	t.Helper()
	timeout = time.Duration(float64(timeout) * h.slower)
	deadline := time.Now().Add(timeout)
	for {
		d := h.delivery(t, key, id)
		if done(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s not done after %s: %+v", id, timeout, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func settled(d deliveryOut) bool { return d.Status != "pending" }

// dlqMu: one DLQ read at a time. A read hides the messages it receives
// until it has seen them all, so two at once against a deployed stack's one
// DLQ would each miss the other's share.
var dlqMu sync.Mutex

// dlq reads every message in the DLQ by delivery id, and leaves them there
// (visible again) for whoever reads next.
func (h *harness) dlq(t *testing.T) map[string][]queue.Message {
	t.Helper()
	dlqMu.Lock()
	defer dlqMu.Unlock()
	out := map[string][]queue.Message{}
	var held []types.ChangeMessageVisibilityBatchRequestEntry
	for empty := 0; empty < 2; {
		res, err := h.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(h.dlqURL), MaxNumberOfMessages: 10, VisibilityTimeout: 30,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range res.Messages {
			held = append(held, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(len(held))), ReceiptHandle: m.ReceiptHandle})
			msg, err := queue.Decode(aws.ToString(m.Body))
			if err != nil {
				out["malformed"] = append(out["malformed"], queue.Message{Reason: domain.FailReason(aws.ToString(m.Body))})
				continue
			}
			out[msg.DeliveryID] = append(out[msg.DeliveryID], msg)
		}
	}
	for start := 0; start < len(held); start += 10 {
		batch := held[start:min(start+10, len(held))]
		for i := range batch {
			batch[i].Id = aws.String(strconv.Itoa(i))
		}
		if _, err := h.sqs.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(h.dlqURL), Entries: batch}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// dlqOf is delivery id's messages in the DLQ, waited for up to 15 s: its
// status is written before its DLQ message is sent, which a loaded pipeline
// sends later.
func (h *harness) dlqOf(t *testing.T, id string) []queue.Message {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if dl := h.dlq(t)[id]; len(dl) > 0 || time.Now().After(deadline) {
			return dl
		}
	}
}

// receiver is a customer's endpoint on loopback. Its answers are scripted by
// respond(n), n counting requests from 1.
type receiver struct {
	t       *testing.T
	srv     *http.Server
	URL     string
	mu      sync.Mutex
	secret  string
	got     []received
	respond func(n int, w http.ResponseWriter, r *http.Request) (status int, body string)
}

type received struct {
	body     []byte
	header   http.Header
	at       time.Time
	verified error
}

func (h *harness) receiver(t *testing.T, respond respondFunc) *receiver {
	t.Helper()
	rv := &receiver{t: t, respond: respond}
	rv.srv = &http.Server{Handler: rv}
	ln, hostPort := h.listen(t)
	go rv.srv.Serve(ln)
	t.Cleanup(func() { rv.srv.Close() })
	rv.URL = "http://" + hostPort + "/hook"
	return rv
}

// listen opens a listener the stack under test can reach (a receiver, a
// token server) and names it as the stack reaches it (host:port).
func (h *harness) listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	addr := "127.0.0.1:0"
	if h.recvHost != "127.0.0.1" {
		addr = ":0" // a deployed stack must reach it from elsewhere
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ln, net.JoinHostPort(h.recvHost, port)
}

// serve serves handler on h.listen until the test ends: its base URL.
func (h *harness) serve(t *testing.T, handler http.Handler) string {
	t.Helper()
	ln, hostPort := h.listen(t)
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + hostPort
}

// endpointItem is the endpoint's item as the table holds it (JSON of the
// attribute values), local or deployed: what a backup would hold.
func (h *harness) endpointItem(t *testing.T, endpointID string) string {
	t.Helper()
	var items []map[string]dbtypes.AttributeValue
	var start map[string]dbtypes.AttributeValue
	for {
		out, err := h.db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(h.table), ExclusiveStartKey: start,
			FilterExpression: aws.String("id = :id"), ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":id": &dbtypes.AttributeValueMemberS{Value: endpointID}}})
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, out.Items...)
		if start = out.LastEvaluatedKey; start == nil {
			break
		}
	}
	if len(items) == 0 {
		t.Fatalf("no item of endpoint %s in the table", endpointID)
	}
	raw, _ := json.Marshal(items)
	return string(raw)
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rv.mu.Lock()
	secret := rv.secret
	rv.got = append(rv.got, received{body: body, header: r.Header.Clone(), at: time.Now(),
		verified: signing.Verify(body, r.Header.Get(signing.Header), []string{secret}, signing.Options{})})
	n := len(rv.got)
	rv.mu.Unlock()
	status, resp := rv.respond(n, w, r)
	if status == 0 {
		return // the script already wrote the answer (or hijacked the connection)
	}
	w.WriteHeader(status)
	io.WriteString(w, resp)
}

func (rv *receiver) setSecret(s string) {
	rv.mu.Lock()
	rv.secret = s
	rv.mu.Unlock()
}

func (rv *receiver) requests() []received {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]received(nil), rv.got...)
}

// respondFunc scripts a receiver: n counts requests from 1; headers may be set on w.
type respondFunc func(n int, w http.ResponseWriter, r *http.Request) (status int, body string)

func always(status int) respondFunc {
	return func(int, http.ResponseWriter, *http.Request) (int, string) { return status, "" }
}

// registerReceiver makes a receiver and registers it as an endpoint.
func (h *harness) registerReceiver(t *testing.T, key string, respond respondFunc, eventTypes ...string) (*receiver, endpointOut) {
	rv := h.receiver(t, respond)
	ep := h.endpoint(t, key, rv.URL, eventTypes...)
	rv.setSecret(ep.Secret)
	return rv, ep
}

const payout = `{"event":"payout.fulfilled","payout_type":"gift_cards","subject_type":"order","recipient_uuid":"6f1c2f3a","updated_at":"2026-11-30T05:00:00Z"}`
