package httpapi_test

import (
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// sealedFixture is the api handler with secrets sealed under a KMS key (the
// emulator), as deployed.
func sealedFixture(t *testing.T) *fixture {
	f := newFixture(t, nil)
	k, keyID := testenv.KMS(t)
	f.app.UseKMS(k, keyID)
	return f
}

// jwks fetches an account's JWKS as a receiver does: no key at all.
func (f *fixture) jwks(t *testing.T, account string) (map[string]ed25519.PublicKey, answer) {
	t.Helper()
	a := f.do(t, "", "GET", "/v1/accounts/"+account+"/jwks.json", "")
	if a.status != 200 {
		return nil, a
	}
	keys, err := signing.ParseJWKS([]byte(a.raw))
	if err != nil {
		t.Fatalf("the JWKS does not parse: %v\n%s", err, a.raw)
	}
	return keys, a
}

// A v1a endpoint's request verifies with only the public keys the JWKS
// serves; a rotation publishes the new key beside the old for the overlap.
func TestV1aEndpointVerifiesWithThePublishedJWKS(t *testing.T) {
	f := sealedFixture(t)
	if keys, a := f.jwks(t, f.acctA); a.status != 200 || len(keys) != 0 || a.headers["Cache-Control"] != "public, max-age=300" {
		t.Fatalf("an account without keys: %d %v %s", a.status, a.headers, a.raw)
	}
	ep := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","signature_scheme":"v1a"}`)
	if ep.status != 201 || ep.body["signature_scheme"] != "v1a" {
		t.Fatalf("create a v1a endpoint: %d %s", ep.status, ep.raw)
	}
	epID := ep.body["id"].(string)
	keys, a := f.jwks(t, f.acctA)
	if len(keys) != 1 {
		t.Fatalf("after a v1a endpoint the JWKS has %d keys: %s", len(keys), a.raw)
	}
	var doc struct {
		Keys []map[string]string `json:"keys"`
	}
	_ = json.Unmarshal([]byte(a.raw), &doc)
	if k := doc.Keys[0]; k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["kid"] == "" || k["x"] == "" || k["d"] != "" {
		t.Fatalf("JWK %v: want kty OKP, crv Ed25519, kid, x and no private part", k)
	}

	sendAndVerify := func(keys map[string]ed25519.PublicKey) error {
		t.Helper()
		var got http.Header
		var body []byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Clone()
			body, _ = io.ReadAll(r.Body)
		}))
		defer srv.Close()
		snap, err := f.app.Store.LoadForAttempt(ctx, store.Ref{AccountID: f.acctA, EndpointID: epID, DeliveryID: "dlv_none", EventID: "evt_none"})
		if err != nil {
			t.Fatal(err)
		}
		ep := snap.Endpoint
		now := domain.Millis(time.Now())
		// The request as the worker builds it (shared/delivery).
		s := webhook.New(webhook.Options{Policy: netguard.Policy{AllowPrivate: true}, Timeout: time.Second})
		res := s.Send(ctx, destination.Request{URL: srv.URL, Body: []byte(`{"event":"a"}`), Secrets: ep.SigningSecrets(now),
			V1aKeys: ep.V1aKeys(now), OmitV1: !ep.SignsV1(), EventType: "a", EventID: "evt_1", DeliveryID: "dlv_1", AttemptID: "att_1", AttemptNum: 1})
		if res.Status != 200 {
			t.Fatalf("send: %+v", res)
		}
		if strings.Contains(got.Get(signing.HeaderWebhookSignature), "v1,") {
			t.Fatalf("a v1a endpoint got a v1 entry: %q", got.Get(signing.HeaderWebhookSignature))
		}
		return signing.VerifyStandardV1a(body, got.Get(signing.HeaderWebhookID), got.Get(signing.HeaderWebhookTimestamp),
			got.Get(signing.HeaderWebhookSignature), signing.PublicKeys(keys), signing.Options{})
	}
	if err := sendAndVerify(keys); err != nil {
		t.Fatalf("the request does not verify with the JWKS: %v", err)
	}
	// Another account's (empty) JWKS does not verify it.
	other, _ := f.account(t)
	if otherKeys, a := f.jwks(t, other); a.status != 200 || len(otherKeys) != 0 {
		t.Fatalf("another account's JWKS: %d %s", a.status, a.raw)
	}

	rot := f.do(t, f.keyA, "POST", "/v1/signing-keys/rotate", "")
	data, _ := rot.body["data"].([]any)
	if rot.status != 200 || len(data) != 2 || rot.body["jwks_path"] != "/v1/accounts/"+f.acctA+"/jwks.json" {
		t.Fatalf("rotate: %d %s", rot.status, rot.raw)
	}
	after, _ := f.jwks(t, f.acctA)
	if len(after) != 2 {
		t.Fatalf("during the overlap the JWKS has %d keys, want the new and the old", len(after))
	}
	// A receiver still holding the JWKS from before the rotation verifies
	// (the old key keeps signing beside the new one), and so does one with
	// only the new key.
	if err := sendAndVerify(keys); err != nil {
		t.Fatalf("with the JWKS from before the rotation: %v", err)
	}
	newOnly := map[string]ed25519.PublicKey{}
	for kid, k := range after {
		if _, old := keys[kid]; !old {
			newOnly[kid] = k
		}
	}
	if err := sendAndVerify(newOnly); err != nil || len(newOnly) != 1 {
		t.Fatalf("with only the new key: %v", err)
	}
	// Rotating with no overlap (after a leak) retires the old keys at once.
	if rot := f.do(t, f.keyA, "POST", "/v1/signing-keys/rotate", `{"overlap_seconds":0}`); rot.status != 200 {
		t.Fatal(rot.raw)
	}
	final, _ := f.jwks(t, f.acctA)
	if len(final) != 1 || sendAndVerify(keys) == nil || sendAndVerify(newOnly) == nil || sendAndVerify(final) != nil {
		t.Fatal("after a rotation without overlap only the newest key should verify")
	}
}

func TestSigningKeyRoutesRefuseBadInput(t *testing.T) {
	f := sealedFixture(t)
	for _, c := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/h","signature_scheme":"v2"}`, 422, "invalid_signature_scheme"},
		{"POST", "/v1/signing-keys/rotate", `{"overlap_seconds":-1}`, 422, "invalid_overlap"},
		{"POST", "/v1/signing-keys/rotate", `{"overlap_seconds":1.5}`, 422, "invalid_overlap"},
		{"POST", "/v1/signing-keys/rotate", `{"overlap":1}`, 400, "invalid_json"},
	} {
		if a := f.do(t, f.keyA, c.method, c.path, c.body); a.status != c.status || a.code() != c.code {
			t.Errorf("%s %s %s: %d %s, want %d %s", c.method, c.path, c.body, a.status, a.code(), c.status, c.code)
		}
	}
	ep := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/h"}`)
	if ep.body["signature_scheme"] != "v1" {
		t.Fatalf("the default scheme: %v", ep.body["signature_scheme"])
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep.body["id"].(string), `{"signature_scheme":"nope"}`); a.status != 422 {
		t.Fatalf("PATCH with a bad scheme: %d %s", a.status, a.raw)
	}
	if keys, _ := f.jwks(t, f.acctA); len(keys) != 0 {
		t.Fatal("refused requests made a signing key")
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep.body["id"].(string), `{"signature_scheme":"both"}`); a.status != 200 || a.body["signature_scheme"] != "both" {
		t.Fatalf("PATCH to both: %d %s", a.status, a.raw)
	}
	if keys, _ := f.jwks(t, f.acctA); len(keys) != 1 {
		t.Fatal("switching an endpoint to both made no signing key")
	}
	if a := f.do(t, "", "POST", "/v1/accounts/"+f.acctA+"/jwks.json", ""); a.status != 405 {
		t.Fatalf("POST to the JWKS: %d", a.status)
	}
	if a := f.do(t, "", "GET", "/v1/accounts/not-an-id/jwks.json", ""); a.status != 404 {
		t.Fatalf("a malformed account id: %d", a.status)
	}
	if a := f.do(t, "", "GET", "/v1/signing-keys", ""); a.status != 401 {
		t.Fatalf("the key list without a key: %d", a.status)
	}
}

// Without a KMS key (a local run without the emulator) v1a is refused
// clearly, and nothing is stored.
func TestV1aWithoutAKMSKeyIsRefused(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/h","signature_scheme":"v1a"}`},
		{"POST", "/v1/signing-keys/rotate", ""},
	} {
		if a := f.do(t, f.keyA, c.method, c.path, c.body); a.status != 503 || a.code() != "signing_keys_unavailable" {
			t.Errorf("%s %s: %d %s", c.method, c.path, a.status, a.raw)
		}
	}
	if list := f.do(t, f.keyA, "GET", "/v1/endpoints", ""); len(list.body["data"].([]any)) != 0 {
		t.Fatalf("a refused v1a endpoint was stored: %s", list.raw)
	}
}

// A rotation while the previous key still signs is a 409 naming when it
// retires, and changes nothing; overlap_seconds 0 goes through.
func TestSigningKeyRotationDuringTheOverlapIsRefused(t *testing.T) {
	f := sealedFixture(t)
	for i := 0; i < 2; i++ { // the account's first key, then a rotation to a second
		if r := f.do(t, f.keyA, "POST", "/v1/signing-keys/rotate", ""); r.status != 200 {
			t.Fatalf("rotation %d: %d %s", i+1, r.status, r.raw)
		}
	}
	before, _ := f.jwks(t, f.acctA)
	r := f.do(t, f.keyA, "POST", "/v1/signing-keys/rotate", `{"overlap_seconds":3600}`)
	if r.status != 409 || r.code() != "previous_key_live" || !strings.Contains(r.raw, "overlap_seconds 0") {
		t.Fatalf("a rotation during the overlap: %d %s", r.status, r.raw)
	}
	if after, _ := f.jwks(t, f.acctA); len(after) != 2 || len(before) != 2 {
		t.Fatalf("the JWKS changed: %d keys, then %d", len(before), len(after))
	}
	if r := f.do(t, f.keyA, "POST", "/v1/signing-keys/rotate", `{"overlap_seconds":0}`); r.status != 200 || len(r.body["data"].([]any)) != 1 {
		t.Fatalf("an emergency rotation during the overlap: %d %s", r.status, r.raw)
	}
}
