package httpapi_test

import (
	"strings"
	"testing"
)

// At most two live secrets: a second rotation while the previous secret
// still signs is a 409 that changes nothing, unless it says to stop that
// secret now; a grace past 24 h is a 422.
func TestRotationsAreCappedAtTwoLiveSecrets(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	secrets := func() []any {
		t.Helper()
		ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, ep)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]any, len(ep.Secrets))
		for i, s := range ep.Secrets {
			out[i] = s.Value
		}
		return out
	}
	first := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", "")
	if first.status != 200 || first.body["previous_secret_expires_at"] == nil {
		t.Fatalf("first rotation: %d %s", first.status, first.raw)
	}
	before := secrets()
	if len(before) != 2 {
		t.Fatalf("after one rotation %d secrets", len(before))
	}

	second := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", `{"expire_previous_after_seconds":60}`)
	msg, _ := second.body["error"].(map[string]any)["message"].(string)
	if second.status != 409 || second.code() != "previous_secret_live" || !strings.Contains(msg, first.body["previous_secret_expires_at"].(string)) ||
		!strings.Contains(msg, `"expire_previous_now":true`) {
		t.Fatalf("a third live secret: %d %s", second.status, second.raw)
	}
	if got := secrets(); len(got) != 2 || got[0] != before[0] || got[1] != before[1] {
		t.Fatalf("the refused rotation changed the secrets: %v, was %v", got, before)
	}

	for body, code := range map[string]string{
		`{"expire_previous_after_seconds":86401}`: "invalid_grace", `{"expire_previous_after_seconds":604800}`: "invalid_grace",
		`{"expire_previous_now":"yes"}`: "invalid_json", `{"expire_previous_now":true,"x":1}`: "invalid_json",
	} {
		if r := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", body); r.code() != code {
			t.Errorf("%s: %d %s, want %s", body, r.status, r.raw, code)
		}
	}

	third := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", `{"expire_previous_now":true,"expire_previous_after_seconds":86400}`)
	got := secrets()
	if third.status != 200 || len(got) != 2 || got[0] != third.body["secret"] || got[1] != before[0] {
		t.Fatalf("rotation that stops the previous secret now: %d %s; secrets %v (were %v)", third.status, third.raw, got, before)
	}
	// With no grace, only the new secret is left: the next rotation needs no flag.
	f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", `{"expire_previous_now":true,"expire_previous_after_seconds":0}`)
	if r := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/rotate-secret", ""); r.status != 200 || len(secrets()) != 2 {
		t.Errorf("rotation after a grace of 0: %d %s", r.status, r.raw)
	}
}
