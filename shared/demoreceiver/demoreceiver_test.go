package demoreceiver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
)

var now = time.Unix(1_764_000_000, 0)

// jwksServer serves one account's JWKS as the API's public route does.
func jwksServer(t *testing.T, account string, pub ed25519.PublicKey, fetches *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if r.URL.Path != "/dev/v1/accounts/"+account+"/jwks.json" {
			json.NewEncoder(w).Encode(signing.JWKS{Keys: []signing.JWK{}})
			return
		}
		json.NewEncoder(w).Encode(signing.JWKS{Keys: []signing.JWK{signing.NewJWK("sk_1", pub)}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func request(body, account string, sig string, ts time.Time) events.LambdaFunctionURLRequest {
	in := events.LambdaFunctionURLRequest{Body: body, Headers: map[string]string{
		"webhook-id": "dlv_1", "webhook-timestamp": strconv.FormatInt(ts.Unix(), 10), "webhook-signature": sig,
		"x-gifq-event": "payout.fulfilled",
	}, QueryStringParameters: map[string]string{}}
	if account != "" {
		in.QueryStringParameters["account"] = account
	}
	in.RequestContext.HTTP.Method = http.MethodPost
	return in
}

func TestVerifiesAndLogs(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	account := domain.NewID("acct")
	var fetches atomic.Int32
	srv := jwksServer(t, account, pub, &fetches)
	var logs bytes.Buffer
	secret := signing.NewSecret()
	r := &Receiver{APIURL: srv.URL + "/dev/", Secrets: []string{secret}, HTTP: srv.Client(),
		Log: slog.New(slog.NewJSONHandler(&logs, nil)), Now: func() time.Time { return now }}
	body := `{"event":"payout.fulfilled"}`
	v1a := signing.SignStandardV1a([]ed25519.PrivateKey{priv}, "dlv_1", now, []byte(body))
	v1 := signing.SignStandard([]string{secret}, "dlv_1", now, []byte(body))

	for _, c := range []struct {
		name, account, sig, body string
		at                       time.Time
		status                   int
		says                     string
	}{
		{"v1a with the account's key", account, v1a, body, now, 204, "verified (v1a)"},
		{"v1 with the secret", "", v1, body, now, 204, "verified (v1)"},
		{"both", account, v1 + " " + v1a, body, now, 204, "verified (v1a, v1)"},
		{"another account's keys", domain.NewID("acct"), v1a, body, now, 401, "no signing key"},
		{"body changed", account, v1a, body + " ", now, 401, "no signature verifies"},
		{"old timestamp", account, v1a, body, now.Add(-time.Hour), 401, "outside the tolerance"},
		{"not an account id", "acme", v1a, body, now, 401, "not an account id"},
	} {
		logs.Reset()
		out, err := r.Handle(context.Background(), request(c.body, c.account, c.sig, c.at))
		if err != nil || out.StatusCode != c.status || !strings.Contains(logs.String(), c.says) {
			t.Errorf("%s: %d %q, %v; log %s", c.name, out.StatusCode, out.Body, err, logs.String())
		}
		if c.status == 204 && !strings.Contains(logs.String(), `payout.fulfilled`) {
			t.Errorf("%s: the log does not show the webhook: %s", c.name, logs.String())
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("%s: the secret is logged", c.name)
		}
	}
	if fetches.Load() != 2 { // the account's keys once (cached), the other account's once
		t.Errorf("JWKS fetched %d times", fetches.Load())
	}
}

func TestSaysWhatIsMissing(t *testing.T) {
	r := &Receiver{HTTP: http.DefaultClient, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)), Now: time.Now}
	out, _ := r.Handle(context.Background(), request("{}", "", "v1,xx", time.Now()))
	if out.StatusCode != 401 || !strings.Contains(out.Body, "?account=") {
		t.Errorf("no key held: %d %q", out.StatusCode, out.Body)
	}
	in := request("{}", "", "", time.Now())
	delete(in.Headers, "webhook-signature")
	if out, _ := r.Handle(context.Background(), in); out.StatusCode != 401 || !strings.Contains(out.Body, "Standard Webhooks") {
		t.Errorf("no headers: %d %q", out.StatusCode, out.Body)
	}
	in.RequestContext.HTTP.Method = http.MethodGet
	if out, _ := r.Handle(context.Background(), in); out.StatusCode != 405 {
		t.Errorf("GET: %d", out.StatusCode)
	}
}
