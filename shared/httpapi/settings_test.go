package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// An endpoint's settings are stored as given, shown with every header
// value masked, and changed by PATCH without losing what it does not name.
func TestEndpointSettingsStoredAndShownMasked(t *testing.T) {
	f := newFixture(t, nil)
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"rate_limit":2,"timeout_seconds":5,"headers":{"authorization":"Bearer gateway-token-42","X-Tenant":"t1"}}}`)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	id := created.body["id"].(string)
	want := `map[headers:map[Authorization:****42 X-Tenant:****] rate_limit:2 timeout_seconds:5]`
	if got := fmt.Sprint(created.body["settings"]); got != want {
		t.Fatalf("created settings %s, want %s", got, want)
	}
	got := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, "")
	if s := fmt.Sprint(got.body["settings"]); s != want || strings.Contains(got.raw, "gateway-token") {
		t.Fatalf("GET shows %s: %s", s, got.raw)
	}
	if list := f.do(t, f.keyA, "GET", "/v1/endpoints", ""); strings.Contains(list.raw, "gateway-token") || !strings.Contains(list.raw, "****42") {
		t.Fatalf("list: %s", list.raw)
	}
	ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, id)
	if err != nil || ep.Settings.Headers["Authorization"] != "Bearer gateway-token-42" {
		t.Fatalf("stored %+v, %v", ep.Settings, err)
	}

	a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"headers":{"X-Tenant":"t2-much-longer"},"remove_headers":["AUTHORIZATION"],"reset":["rate_limit"]}}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[headers:map[X-Tenant:****er] timeout_seconds:5]` {
		t.Fatalf("PATCH: %d %s", a.status, a.raw)
	}
	// A PATCH without settings leaves them alone.
	a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"description":"gateway"}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[headers:map[X-Tenant:****er] timeout_seconds:5]` {
		t.Fatalf("PATCH of the description: %d %s", a.status, a.raw)
	}
	a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"reset":["headers","timeout_seconds"]}}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[headers:map[]]` {
		t.Fatalf("reset all: %d %s", a.status, a.raw)
	}
	// An endpoint registered without settings shows an empty headers object.
	plain := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/plain"}`)
	if s := fmt.Sprint(plain.body["settings"]); plain.status != 201 || s != `map[headers:map[]]` {
		t.Fatalf("plain: %d %s", plain.status, plain.raw)
	}
}

// Every bad setting is a 422 naming what is wrong, on registration and on
// PATCH, and changes nothing.
func TestEndpointSettingsRefusedChangeNothing(t *testing.T) {
	f := newFixture(t, nil) // the account's rate is the deployment's 5/s
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"timeout_seconds":4,"headers":{"X-Keep":"v"}}}`)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	id := created.body["id"].(string)
	before := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, "").raw
	eleven := []string{}
	for i := range 11 {
		eleven = append(eleven, fmt.Sprintf(`"X-H%d":"v"`, i))
	}
	ten := strings.Join(eleven[:10], ",") // with X-Keep, an 11th
	for _, c := range []struct {
		name, settings string
		status         int
		says           string
	}{
		{"Host", `{"headers":{"Host":"evil.example.com"}}`, 422, "Host"},
		{"Content-Type", `{"headers":{"Content-Type":"text/plain"}}`, 422, "Content-Type"},
		{"a signature header", `{"headers":{"x-gifq-signature":"t=1"}}`, 422, "x-gifq-signature"},
		{"webhook-id", `{"headers":{"webhook-id":"x"}}`, 422, "webhook-id"},
		{"Connection", `{"headers":{"Connection":"close"}}`, 422, "Connection"},
		{"not a token", `{"headers":{"X Bad":"v"}}`, 422, "X Bad"},
		{"header injection", `{"headers":{"X-A":"v\r\nX-B: 1"}}`, 422, "control character"},
		{"timeout 0", `{"timeout_seconds":0}`, 422, "timeout_seconds"},
		{"timeout 11", `{"timeout_seconds":11}`, 422, "timeout_seconds"},
		{"rate above the account's", `{"rate_limit":6}`, 422, "above the account's 5"},
		{"rate 0", `{"rate_limit":0}`, 422, "rate_limit"},
		{"11 headers", `{"headers":{` + strings.Join(eleven, ",") + `}}`, 422, "at most 10"},
		{"a string rate", `{"rate_limit":"2"}`, 400, "invalid_json"},
		{"a filter not an object", `{"filter":["x"]}`, 422, "invalid_filter"},
		{"a filter with a bare value", `{"filter":{"data":{"kind":"crypto"}}}`, 422, "settings.filter: data.kind: must be a list"},
		{"an unknown condition", `{"filter":{"event":[{"suffix":".paid"}]}}`, 422, "invalid_filter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.calls.Reset()
			a := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/x","settings":`+c.settings+`}`)
			if a.status != c.status || !strings.Contains(a.raw, c.says) {
				t.Errorf("POST: %d %s", a.status, a.raw)
			}
			a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"description":"changed","settings":`+c.settings+`}`)
			if a.status != c.status || !strings.Contains(a.raw, c.says) {
				t.Errorf("PATCH: %d %s", a.status, a.raw)
			}
			// Each request takes one token of the key's management limit
			// (an UpdateItem of its ILIM item): nothing else is written.
			if w := f.calls.Count("DynamoDB.TransactWriteItems") + f.calls.Count("DynamoDB.PutItem") + f.calls.Count("DynamoDB.UpdateItem") - 2; w != 0 {
				t.Errorf("%d writes", w)
			}
		})
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"headers":{`+ten+`}}}`); a.status != 422 || !strings.Contains(a.raw, "at most 10") {
		t.Errorf("an 11th header by PATCH: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"reset":["url"]}}`); a.status != 422 {
		t.Errorf("reset of url: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/x","settings":{"reset":["headers"]}}`); a.status != 400 {
		t.Errorf("reset on registration: %d %s", a.status, a.raw)
	}
	if after := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, "").raw; after != before {
		t.Errorf("refused changes changed the endpoint:\n%s\n%s", before, after)
	}
	if list := f.do(t, f.keyA, "GET", "/v1/endpoints", ""); len(list.body["data"].([]any)) != 1 {
		t.Errorf("refused registrations stored endpoints: %s", list.raw)
	}
}

// A content filter is stored compact, shown as given, kept by a PATCH
// that does not name it, replaced by one that does, and removed by reset.
func TestEndpointFilterStoredShownAndReset(t *testing.T) {
	f := newFixture(t, nil)
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"filter":{ "data": {"payout_type": ["crypto"]} }}}`)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	id := created.body["id"].(string)
	want := `map[filter:map[data:map[payout_type:[crypto]]] headers:map[]]`
	if got := fmt.Sprint(created.body["settings"]); got != want {
		t.Fatalf("created settings %s, want %s", got, want)
	}
	ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, id)
	if err != nil || ep.Settings.Filter != `{"data":{"payout_type":["crypto"]}}` {
		t.Fatalf("stored %+v, %v", ep.Settings, err)
	}
	a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"timeout_seconds":3}}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[filter:map[data:map[payout_type:[crypto]]] headers:map[] timeout_seconds:3]` {
		t.Fatalf("PATCH without the filter: %d %s", a.status, a.raw)
	}
	a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"filter":{"event":[{"prefix":"payout."}]}}}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[filter:map[event:[map[prefix:payout.]]] headers:map[] timeout_seconds:3]` {
		t.Fatalf("PATCH of the filter: %d %s", a.status, a.raw)
	}
	a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"reset":["filter"]}}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[headers:map[] timeout_seconds:3]` {
		t.Fatalf("reset of the filter: %d %s", a.status, a.raw)
	}
}

// A settings write made from a stale read is refused (ErrConflict), so two
// PATCHes of the headers cannot lose one; a deleted endpoint is not found.
func TestSettingsWriteFromAStaleReadConflicts(t *testing.T) {
	f := newFixture(t, nil)
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"headers":{"X-A":"1"}}}`)
	id := created.body["id"].(string)
	read, err := f.app.Store.GetEndpoint(ctx, f.acctA, id)
	if err != nil {
		t.Fatal(err)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"headers":{"X-B":"2"}}}`); a.status != 200 {
		t.Fatalf("PATCH: %d %s", a.status, a.raw)
	}
	stale := domain.EndpointSettings{Headers: map[string]string{"X-A": "1", "X-C": "3"}} // made from the read before X-B
	_, err = f.app.Store.UpdateEndpoint(ctx, f.acctA, id, store.EndpointPatch{Settings: &stale, SeenUpdatedAt: read.UpdatedAt})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale write: %v, want ErrConflict", err)
	}
	if got := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, ""); fmt.Sprint(got.body["settings"]) != `map[headers:map[X-A:**** X-B:****]]` {
		t.Fatalf("after the stale write: %s", got.raw)
	}
	if a := f.do(t, f.keyA, "DELETE", "/v1/endpoints/"+id, ""); a.status != 204 {
		t.Fatalf("delete: %d", a.status)
	}
	_, err = f.app.Store.UpdateEndpoint(ctx, f.acctA, id, store.EndpointPatch{Settings: &stale, SeenUpdatedAt: read.UpdatedAt})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("write to a deleted endpoint: %v, want ErrNotFound", err)
	}
}

// A PATCH that re-points the URL to another origin does not carry the
// custom headers set for the old one there: it is refused unless it gives
// them again (then only those given are kept) or resets them. A new path
// on the same origin keeps them.
func TestRepointingTheURLDoesNotCarryTheHeaders(t *testing.T) {
	f := newFixture(t, nil)
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"headers":{"Authorization":"Bearer old-origin-token","X-Tenant":"t1"}}}`)
	id := created.body["id"].(string)
	headers := func() map[string]string {
		ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, id)
		if err != nil {
			t.Fatal(err)
		}
		return ep.Settings.Headers
	}
	a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.2:9/hook"}`)
	if a.status != 422 || a.code() != "headers_not_confirmed" || !strings.Contains(a.raw, "Authorization, X-Tenant") {
		t.Fatalf("re-pointed without the headers: %d %s", a.status, a.raw)
	}
	if ep, _ := f.app.Store.GetEndpoint(ctx, f.acctA, id); ep.URL != "http://127.0.0.1:9/hook" || headers()["Authorization"] != "Bearer old-origin-token" {
		t.Fatalf("a refused PATCH changed the endpoint: %+v", ep)
	}
	// Same origin, another path: the headers stay.
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.1:9/other"}`); a.status != 200 || len(headers()) != 2 {
		t.Fatalf("same origin: %d %s %v", a.status, a.raw, headers())
	}
	// Given again: only those given go to the new origin.
	a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.2:9/hook","settings":{"headers":{"Authorization":"Bearer new-origin-token"}}}`)
	if h := headers(); a.status != 200 || len(h) != 1 || h["Authorization"] != "Bearer new-origin-token" {
		t.Fatalf("re-pointed with a header: %d %s %v", a.status, a.raw, h)
	}
	// Reset: none.
	a = f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.3:9/hook","settings":{"reset":["headers"]}}`)
	if h := headers(); a.status != 200 || len(h) != 0 {
		t.Fatalf("re-pointed with a reset: %d %s %v", a.status, a.raw, h)
	}
}

// A PATCH that re-points the URL to another origin does not carry the TLS
// client certificate and key there: it is refused unless settings.tls is
// given again with its key, or reset. A new path keeps them.
func TestRepointingTheURLDoesNotCarryTheClientKey(t *testing.T) {
	f := newFixture(t, nil)
	cert, key := clientPair(t)
	tlsJSON, _ := json.Marshal(map[string]string{"client_cert": cert, "client_key": key})
	certOnly, _ := json.Marshal(map[string]string{"client_cert": cert})
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"tls":`+string(tlsJSON)+`}}`)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	id := created.body["id"].(string)
	stored := func() domain.Endpoint {
		ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, id)
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	for _, body := range []string{
		`{"url":"http://127.0.0.2:9/hook"}`,
		`{"url":"http://127.0.0.2:9/hook","settings":{"timeout_seconds":5}}`,
		`{"url":"http://127.0.0.2:9/hook","settings":{"tls":` + string(certOnly) + `}}`, // the key kept: not a confirmation
	} {
		a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, body)
		if a.status != 422 || a.code() != "tls_not_confirmed" {
			t.Fatalf("re-pointed without the key (%.60s): %d %s", body, a.status, a.raw)
		}
		if ep := stored(); ep.URL != "http://127.0.0.1:9/hook" || ep.Settings.TLS == nil || ep.Settings.TLS.KeyPEM != key {
			t.Fatalf("a refused PATCH changed the endpoint: %+v", ep)
		}
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.1:9/other"}`); a.status != 200 || stored().Settings.TLS == nil {
		t.Fatalf("same origin: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.2:9/hook","settings":{"tls":`+string(tlsJSON)+`}}`); a.status != 200 || stored().Settings.TLS.KeyPEM != key {
		t.Fatalf("re-pointed with the key: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"url":"http://127.0.0.3:9/hook","settings":{"reset":["tls"]}}`); a.status != 200 || stored().Settings.TLS != nil {
		t.Fatalf("re-pointed with a reset: %d %s", a.status, a.raw)
	}
}

func clientPair(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}))
}
