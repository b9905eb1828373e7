package httpapi_test

import (
	"reflect"
	"testing"

	"github.com/gifq/webhooks/shared/opevents"
)

// A rotation publishes endpoint.secret_rotated (without the secret); an
// owner's disable publishes endpoint.disabled by api once, not again for a
// PATCH that disables a disabled endpoint; every create, PATCH and delete
// publishes endpoint.created, endpoint.updated, endpoint.deleted.
func TestAPIPublishesRotationsAndDisables(t *testing.T) {
	f := newFixture(t, nil)
	h := &opevents.Recorder{}
	f.api.OpEvents = h
	types := func() (out []opevents.Type) {
		for _, e := range h.Events() {
			out = append(out, e.Type)
		}
		return out
	}
	ep := f.endpoint(t, f.keyA)
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"description":"x"}`); a.status != 200 {
		t.Fatal(a.raw)
	}
	if got := types(); !reflect.DeepEqual(got, []opevents.Type{opevents.EndpointCreated, opevents.EndpointUpdated}) {
		t.Fatalf("create and a description change published %v", got)
	}
	created := h.Events()[0].Detail.(opevents.EndpointChangedDetail)
	if created.EndpointID != ep || created.AccountID != f.acctA || created.URL == "" || created.ChangedAt == "" {
		t.Errorf("created detail %+v", created)
	}
	rot := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", "")
	if rot.status != 200 || len(h.Events()) != 3 || h.Events()[2].Type != opevents.SecretRotated {
		t.Fatalf("rotation: %d, published %v", rot.status, types())
	}
	d := h.Events()[2].Detail.(opevents.SecretRotatedDetail)
	if d.EndpointID != ep || d.AccountID != f.acctA || d.PreviousSecretExpiresAt != rot.body["previous_secret_expires_at"] {
		t.Errorf("rotated detail %+v, answer %s", d, rot.raw)
	}
	for range 2 {
		if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"disabled":true}`); a.status != 200 {
			t.Fatal(a.raw)
		}
	}
	want := []opevents.Type{opevents.EndpointCreated, opevents.EndpointUpdated, opevents.SecretRotated,
		opevents.EndpointDisabled, opevents.EndpointUpdated, opevents.EndpointUpdated}
	if got := types(); !reflect.DeepEqual(got, want) {
		t.Fatalf("two disables published %v", got)
	}
	dis := h.Events()[3].Detail.(opevents.EndpointDisabledDetail)
	if dis.By != opevents.ByAPI || dis.EndpointID != ep || dis.Reason == "" {
		t.Errorf("disabled detail %+v", dis)
	}
	if a := f.do(t, f.keyA, "DELETE", "/v1/endpoints/"+ep, ""); a.status != 204 {
		t.Fatal(a.raw)
	}
	if got := types(); got[len(got)-1] != opevents.EndpointDeleted || h.Events()[len(got)-1].Detail.(opevents.EndpointChangedDetail).EndpointID != ep {
		t.Errorf("delete published %v", got)
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
