package httpapi_test

import (
	"testing"

	"github.com/gifq/webhooks/shared/opevents"
)

// A rotation publishes endpoint.secret_rotated (without the secret); an
// owner's disable publishes endpoint.disabled by api once, not again for a
// PATCH that disables a disabled endpoint; other changes publish nothing.
func TestAPIPublishesRotationsAndDisables(t *testing.T) {
	f := newFixture(t, nil)
	h := &opevents.Recorder{}
	f.api.OpEvents = h
	ep := f.endpoint(t, f.keyA)
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"description":"x"}`); a.status != 200 || len(h.Events()) != 0 {
		t.Fatalf("a description change: %d, published %+v", a.status, h.Events())
	}
	rot := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", "")
	if rot.status != 200 || len(h.Events()) != 1 || h.Events()[0].Type != opevents.SecretRotated {
		t.Fatalf("rotation: %d, published %+v", rot.status, h.Events())
	}
	d := h.Events()[0].Detail.(opevents.SecretRotatedDetail)
	if d.EndpointID != ep || d.AccountID != f.acctA || d.PreviousSecretExpiresAt != rot.body["previous_secret_expires_at"] {
		t.Errorf("rotated detail %+v, answer %s", d, rot.raw)
	}
	for range 2 {
		if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"disabled":true}`); a.status != 200 {
			t.Fatal(a.raw)
		}
	}
	if len(h.Events()) != 2 || h.Events()[1].Type != opevents.EndpointDisabled {
		t.Fatalf("two disables published %+v", h.Events())
	}
	dis := h.Events()[1].Detail.(opevents.EndpointDisabledDetail)
	if dis.By != opevents.ByAPI || dis.EndpointID != ep || dis.Reason == "" {
		t.Errorf("disabled detail %+v", dis)
	}
}

// The endpoint shows its health, read-only: a new endpoint's breaker is
// closed with no failures.
func TestEndpointShowsItsHealth(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	a := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, "")
	h, _ := a.body["health"].(map[string]any)
	if a.status != 200 || h["breaker"] != "closed" || h["consecutive_failures"] != 0.0 || h["last_failure_at"] != nil {
		t.Fatalf("health: %d %s", a.status, a.raw)
	}
	if r := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"health":{"breaker":"open"}}`); r.status != 400 && r.status != 422 {
		t.Errorf("PATCH health: %d %s", r.status, r.raw)
	}
}
