package e2e

import (
	"testing"
	"time"
)

// Regressions for what Schemathesis found (docs/apifuzz.md), through the HTTP API.
func TestSchemathesisFindings(t *testing.T) {
	t.Parallel()
	h := start(t, opts{env: map[string]string{"PORTAL_URL": "http://127.0.0.1:1/portal/"}})
	_, key := h.account(t)
	ep := h.endpoint(t, key, "http://127.0.0.1:1/hook")

	// A window starting in the year 0347 was a 500 (ids do not encode times
	// before 1970); it is the whole retention now. One in the future finds nothing.
	for _, body := range []string{`{"since":"0347-06-16T01:23:00+08:18"}`, `{"since":"2999-01-01T00:00:00Z","until":"3000-01-01T00:00:00Z"}`} {
		var rec struct {
			Recovered int  `json:"recovered"`
			More      bool `json:"more"`
		}
		if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", body, &rec); code != 202 || rec.Recovered != 0 {
			t.Errorf("recover %s: %d %+v", body, code, rec)
		}
	}

	// 3600.0 is an integer to JSON Schema, and was a 400; 1.5 is not.
	var rot struct {
		ExpiresAt time.Time `json:"previous_secret_expires_at"`
	}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_after_seconds":3600.0}`, &rot); code != 200 ||
		time.Until(rot.ExpiresAt) > time.Hour || time.Until(rot.ExpiresAt) < 59*time.Minute {
		t.Errorf("rotate with 3600.0: %d %+v", code, rot)
	}
	var e errOut
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_after_seconds":1.5}`, &e); code != 422 || e.Error.Code != "invalid_grace" {
		t.Errorf("rotate with 1.5: %d %+v", code, e)
	}

	// The same for a portal session's ttl_seconds: 900.0 was a 400.
	var ps struct {
		ExpiresAt time.Time `json:"expires_at"`
	}
	if code := h.call(t, key, "POST", "/v1/portal/sessions", `{"ttl_seconds":900.0}`, &ps); code != 201 || time.Until(ps.ExpiresAt) > 15*time.Minute {
		t.Errorf("portal session with 900.0: %d %+v", code, ps)
	}
	if code := h.call(t, key, "POST", "/v1/portal/sessions", `{"ttl_seconds":900.5}`, &e); code != 422 || e.Error.Code != "invalid_ttl" {
		t.Errorf("portal session with 900.5: %d %+v", code, e)
	}

	// ?limit=x&limit= was read as the last value (empty: the default) and answered 200.
	for q, want := range map[string]string{"limit=x&limit=": "invalid_query", "limit=": "invalid_limit", "status=": "invalid_status"} {
		if code := h.call(t, key, "GET", "/v1/endpoints/"+ep.ID+"/deliveries?"+q, nil, &e); code != 400 || e.Error.Code != want {
			t.Errorf("?%s: %d %+v, want 400 %s", q, code, e, want)
		}
	}

	// An empty Idempotency-Key was taken as no key.
	if code := h.call(t, key, "POST", "/v1/events", payout, &e, "Idempotency-Key", ""); code != 400 || e.Error.Code != "invalid_idempotency_key" {
		t.Errorf("empty Idempotency-Key: %d %+v", code, e)
	}

	// null bodies and fields were read as absent and answered 200/201.
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/v1/endpoints/" + ep.ID, `null`},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret", `null`},
		{"POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/x","event_types":null}`},
		{"POST", "/v1/endpoints/" + ep.ID + "/recover", `{"since":"2026-11-30T00:00:00Z","until":null}`},
		{"POST", "/v1/events/batch", `{"events":[{"body":{"event":"a"},"idempotency_key":null}]}`},
		{"POST", "/v1/events/batch", `{"events":[{"idempotency_key":"k"}]}`},
	} {
		if code := h.call(t, key, c.method, c.path, c.body, &e); code != 400 || e.Error.Code != "invalid_json" {
			t.Errorf("%s %s %s: %d %+v", c.method, c.path, c.body, code, e)
		}
	}
}
