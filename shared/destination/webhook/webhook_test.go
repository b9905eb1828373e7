package webhook

import (
	"context"
	"crypto/ed25519"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/signing"
)

func local(timeout time.Duration) *Sender {
	return New(Options{Policy: netguard.Policy{AllowPrivate: true}, Timeout: timeout})
}

// Two secrets as NewSecret makes them, as during a rotation.
var secretA, secretB = signing.NewSecret(), signing.NewSecret()

func req(url string) Request {
	return Request{URL: url, Body: []byte(`{"event":"payout.fulfilled"}`), Secrets: []string{secretA, secretB},
		EventType: "payout.fulfilled", EventID: "evt_1", DeliveryID: "dlv_1", AttemptID: "att_1", AttemptNum: 3}
}

func TestSendSignsAndSetsHeaders(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, must(io.ReadAll(r.Body))
		w.WriteHeader(204)
	}))
	defer srv.Close()
	res := local(time.Second).Send(context.Background(), req(srv.URL))
	if res.Status != 204 || res.Class != "" {
		t.Fatalf("result %+v", res)
	}
	if string(body) != `{"event":"payout.fulfilled"}` || got.Method != http.MethodPost {
		t.Fatalf("body %q method %s", body, got.Method)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json", HeaderEvent: "payout.fulfilled", HeaderEventID: "evt_1",
		HeaderDelivery: "att_1", HeaderAttempt: "3", "User-Agent": UserAgent,
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	sig := got.Header.Get(signing.Header)
	for _, secret := range []string{secretA, secretB} {
		if err := signing.Verify(body, sig, []string{secret}, signing.Options{}); err != nil {
			t.Errorf("signature does not verify: %v", err)
		}
		// Standard Webhooks, checked by its reference library.
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, got.Header); err != nil {
			t.Errorf("Standard Webhooks signature does not verify: %v", err)
		}
	}
	if id := got.Header.Get(signing.HeaderWebhookID); id != "dlv_1" {
		t.Errorf("webhook-id = %q, want the delivery id", id)
	}
}

// webhook-id stays with the delivery; the timestamp and signatures are the attempt's.
func TestEveryAttemptOfADeliveryHasItsWebhookID(t *testing.T) {
	var headers []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers = append(headers, r.Header.Clone())
		w.WriteHeader(500)
	}))
	defer srv.Close()
	s := local(time.Second)
	clock := time.Unix(1_764_460_800, 0)
	s.now = func() time.Time { return clock }
	for i := 1; i <= 2; i++ {
		r := req(srv.URL)
		r.AttemptID, r.AttemptNum = "att_"+strconv.Itoa(i), i
		s.Send(context.Background(), r)
		clock = clock.Add(16 * time.Second)
	}
	if len(headers) != 2 {
		t.Fatalf("%d requests", len(headers))
	}
	first, second := headers[0], headers[1]
	if first.Get(signing.HeaderWebhookID) != "dlv_1" || second.Get(signing.HeaderWebhookID) != "dlv_1" {
		t.Errorf("webhook-id %q, %q: want dlv_1 on both", first.Get(signing.HeaderWebhookID), second.Get(signing.HeaderWebhookID))
	}
	if first.Get(signing.HeaderWebhookTimestamp) == second.Get(signing.HeaderWebhookTimestamp) ||
		first.Get(signing.HeaderWebhookSignature) == second.Get(signing.HeaderWebhookSignature) {
		t.Error("a retry must carry its own timestamp and signature")
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	followed := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed = true
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	res := local(time.Second).Send(context.Background(), req(srv.URL+"/hook"))
	if res.Status != 302 || followed {
		t.Fatalf("status %d followed %v", res.Status, followed)
	}
	if res.Verdict != destination.Rejected {
		t.Fatal("a 302 must fail the delivery")
	}
}

func TestResponseBodyIsCappedAndValidUTF8(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, strings.Repeat("a", 1023)+"é"+strings.Repeat("b", 5000))
	}))
	defer srv.Close()
	res := local(time.Second).Send(context.Background(), req(srv.URL))
	if !res.Truncated || len(res.Response) > 1024+3 || !strings.HasPrefix(res.Response, strings.Repeat("a", 1023)) {
		t.Fatalf("stored %d bytes, truncated %v", len(res.Response), res.Truncated)
	}
	if strings.Contains(res.Response, "b") {
		t.Fatal("kept bytes past the cap")
	}
}

func TestTransportErrorClasses(t *testing.T) {
	// Timeout: the receiver answers after the client's timeout.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond)
	}))
	defer slow.Close()
	if res := local(100*time.Millisecond).Send(context.Background(), req(slow.URL)); res.Class != ErrTimeout {
		t.Errorf("slow receiver: %+v", res)
	}

	// Connection refused: nothing listens.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if res := local(time.Second).Send(context.Background(), req("http://"+addr)); res.Class != ErrConnRefused {
		t.Errorf("closed port: %+v", res)
	}

	// Reset: the receiver closes the connection without answering.
	ln, _ = net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 512)
			c.Read(buf)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			c.Close()
		}
	}()
	if res := local(time.Second).Send(context.Background(), req("http://"+ln.Addr().String())); res.Class != ErrConnReset {
		t.Errorf("reset: %+v", res)
	}

	// TLS: a plain HTTP client talking to a TLS server with an unknown CA.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	if res := local(time.Second).Send(context.Background(), req(tlsSrv.URL)); res.Class != ErrTLS {
		t.Errorf("untrusted certificate: %+v", res)
	}

	// DNS: a name that does not resolve.
	if res := local(time.Second).Send(context.Background(), req("http://no-such-host.invalid/")); res.Class != ErrDNS {
		t.Errorf("unresolvable: %+v", res)
	}

	// Guard: loopback refused at dial time when private addresses are not allowed.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("reached") }))
	defer ok.Close()
	guarded := New(Options{Policy: netguard.Policy{}, Timeout: time.Second})
	res := guarded.Send(context.Background(), req(ok.URL))
	if res.Class != ErrBlockedAddress || strings.Contains(res.Error, "127.0.0.1") {
		t.Errorf("guarded: %+v", res)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "30": 30 * time.Second, "0": 0, "-5": 0, "soon": 0,
		"Mon, 30 Nov 2026 12:01:00 GMT": time.Minute, "Mon, 30 Nov 2026 11:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q = %s, want %s", v, got, want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The endpoint's scheme picks webhook-signature's entries: v1a alone is
// verified with the account's public key only (and carries no HMAC a
// receiver could be tempted to check with a shared secret); both carries
// both. X-Gifq-Signature is on every request.
func TestSignatureSchemes(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r.Header.Clone(), must(io.ReadAll(r.Body))
		w.WriteHeader(204)
	}))
	defer srv.Close()
	for _, c := range []struct {
		name            string
		keys            []ed25519.PrivateKey
		omitV1          bool
		wantV1, wantV1a bool
	}{
		{"v1", nil, false, true, false},
		{"v1a", []ed25519.PrivateKey{priv}, true, false, true},
		{"both", []ed25519.PrivateKey{priv}, false, true, true},
	} {
		r := req(srv.URL)
		r.V1aKeys, r.OmitV1 = c.keys, c.omitV1
		if res := local(time.Second).Send(context.Background(), r); res.Status != 204 {
			t.Fatalf("%s: %+v", c.name, res)
		}
		sig := got.Get(signing.HeaderWebhookSignature)
		id, ts := got.Get(signing.HeaderWebhookID), got.Get(signing.HeaderWebhookTimestamp)
		v1 := signing.VerifyStandard(body, id, ts, sig, []string{secretA}, signing.Options{})
		v1a := signing.VerifyStandardV1a(body, id, ts, sig, []ed25519.PublicKey{pub}, signing.Options{})
		if (v1 == nil) != c.wantV1 || (v1a == nil) != c.wantV1a {
			t.Errorf("%s: webhook-signature %q: v1 check %v, v1a check %v", c.name, sig, v1, v1a)
		}
		if err := signing.Verify(body, got.Get(signing.Header), []string{secretA}, signing.Options{}); err != nil {
			t.Errorf("%s: X-Gifq-Signature: %v", c.name, err)
		}
	}
}

// An endpoint's own headers go on the request; one that names a header the
// sender sets (endpointcfg refuses those, this is the second line) loses to
// the sender's, so the signature can never be replaced.
func TestEndpointHeadersAreSentUnderTheSenders(t *testing.T) {
	var got http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r.Header, must(io.ReadAll(r.Body))
		w.WriteHeader(204)
	}))
	defer srv.Close()
	r := req(srv.URL)
	r.Headers = map[string]string{"Authorization": "Bearer gw-token", "X-Tenant": "t1",
		signing.Header: "t=1,v1=forged", signing.HeaderWebhookID: "forged", "Content-Type": "text/plain", HeaderEvent: "forged"}
	if res := local(time.Second).Send(context.Background(), r); res.Status != 204 {
		t.Fatalf("result %+v", res)
	}
	if got.Get("Authorization") != "Bearer gw-token" || got.Get("X-Tenant") != "t1" {
		t.Errorf("endpoint headers not sent: %v", got)
	}
	if got.Get(signing.HeaderWebhookID) != "dlv_1" || got.Get("Content-Type") != "application/json" || got.Get(HeaderEvent) != "payout.fulfilled" {
		t.Errorf("an endpoint header replaced the sender's: %v", got)
	}
	if len(got.Values(signing.Header)) != 1 {
		t.Errorf("signature header values: %q", got.Values(signing.Header))
	}
	if err := signing.Verify(body, got.Get(signing.Header), []string{secretA}, signing.Options{}); err != nil {
		t.Errorf("signature does not verify: %v", err)
	}
}

// A request's own timeout, shorter than the Sender's, ends the attempt.
func TestRequestTimeoutIsTheEndpoints(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	r := req(slow.URL)
	r.Deadline = time.Now().Add(100 * time.Millisecond)
	// The Sender's own timeout is an hour: only the request's can end this.
	if res := local(time.Hour).Send(context.Background(), r); res.Class != ErrTimeout {
		t.Errorf("result %+v, want a timeout", res)
	}
}

func TestVerdictOf(t *testing.T) {
	tests := []struct {
		status     int
		retryAfter time.Duration
		want       destination.Verdict
	}{
		{200, 0, destination.Delivered}, {201, 0, destination.Delivered}, {204, 0, destination.Delivered}, {299, 0, destination.Delivered},
		{301, 0, destination.Rejected}, {302, 0, destination.Rejected}, {304, 0, destination.Rejected}, {307, 0, destination.Rejected},
		{308, 0, destination.Rejected}, {400, 0, destination.Rejected}, {401, 0, destination.Rejected}, {404, 0, destination.Rejected},
		{408, 0, destination.Rejected}, {410, 0, destination.Gone}, {429, 0, destination.Rejected},
		{429, 30 * time.Second, destination.Throttled}, {499, 0, destination.Rejected},
		{500, 0, destination.Retry}, {502, 0, destination.Retry}, {503, time.Minute, destination.Retry}, {504, 0, destination.Retry},
		{599, 0, destination.Retry}, {100, 0, destination.Rejected},
	}
	for _, tt := range tests {
		if got := VerdictOf(tt.status, tt.retryAfter); got != tt.want {
			t.Errorf("VerdictOf(%d, %s) = %s, want %s", tt.status, tt.retryAfter, got, tt.want)
		}
	}
}

func TestTransportFailuresAreRetriedUnanswered(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	res := local(time.Second).Send(context.Background(), req("http://"+addr))
	if res.Verdict != destination.Retry || !res.NoAnswer || res.Answered() {
		t.Fatalf("a refused connection is retried and counts as no answer: %+v", res)
	}
	guarded := New(Options{Policy: netguard.Policy{}, Timeout: time.Second})
	res = guarded.Send(context.Background(), req("http://127.0.0.1:1/"))
	if res.Verdict != destination.Rejected || !res.Forbidden || res.Answered() {
		t.Fatalf("a blocked address fails for good: %+v", res)
	}
}

// A keyed event's attempts carry its key and number, and on an ordered
// endpoint whether the key's previous event failed; an unkeyed event's none.
func TestKeyedEventHeaders(t *testing.T) {
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		w.WriteHeader(204)
	}))
	defer srv.Close()
	s := local(time.Second)
	keyed := req(srv.URL)
	keyed.OrderingKey, keyed.Seq = "order-7", 12
	s.Send(context.Background(), keyed)
	keyed.PrevFailed = true
	s.Send(context.Background(), keyed)
	s.Send(context.Background(), req(srv.URL))
	if len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	for i, want := range []map[string]string{
		{HeaderOrderingKey: "order-7", HeaderSequence: "12", HeaderPrevious: ""},
		{HeaderOrderingKey: "order-7", HeaderSequence: "12", HeaderPrevious: "failed"},
		{HeaderOrderingKey: "", HeaderSequence: "", HeaderPrevious: ""},
	} {
		for k, v := range want {
			if g := got[i].Get(k); g != v {
				t.Errorf("request %d: %s = %q, want %q", i, k, g, v)
			}
		}
	}
}
