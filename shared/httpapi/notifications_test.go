package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

// The account's notification emails are set whole by PUT, shown by GET
// /v1/account, kept once when repeated, removed by []; a list over the
// bounds is a 422 that names the field and changes nothing; another
// account's are its own; no address reaches the logs.
func TestNotificationEmailsSetBoundedAndPrivate(t *testing.T) {
	f := newFixture(t, nil)
	emails := func(key string) string {
		t.Helper()
		r := f.do(t, key, "GET", "/v1/account", "")
		if r.status != 200 {
			t.Fatalf("GET /v1/account: %d %s", r.status, r.raw)
		}
		return fmt.Sprint(r.body["notification_emails"])
	}
	if got := emails(f.keyA); got != "[]" {
		t.Fatalf("before: %s", got)
	}
	put := f.do(t, f.keyA, "PUT", "/v1/account/notifications", `{"emails":["ops@acme.example","oncall@acme.example","OPS@acme.example"]}`)
	if put.status != 200 || fmt.Sprint(put.body["emails"]) != "[ops@acme.example oncall@acme.example]" {
		t.Fatalf("PUT: %d %s", put.status, put.raw)
	}
	if got := emails(f.keyA); got != "[ops@acme.example oncall@acme.example]" {
		t.Fatalf("after PUT: %s", got)
	}
	if got := emails(f.keyB); got != "[]" {
		t.Fatalf("another account sees %s", got)
	}
	long := strings.Repeat("a", 250) + "@b.example"
	for body, field := range map[string]string{
		`{"emails":["a@x.example","b@x.example","c@x.example","d@x.example","e@x.example","f@x.example"]}`: "emails: at most 5",
		`{"emails":["ok@x.example","not an address"]}`:                                                     "emails[1]",
		`{"emails":["Ops <ops@x.example>"]}`:                                                               "emails[0]",
		`{"emails":["` + long + `"]}`:                                                                      "emails[0]: longer than 254 bytes",
		`{}`:                                                                                               "emails: required",
	} {
		r := f.do(t, f.keyA, "PUT", "/v1/account/notifications", body)
		if msg, _ := r.body["error"].(map[string]any)["message"].(string); r.status != 422 || !strings.HasPrefix(msg, field) {
			t.Errorf("%s: %d %s, want 422 naming %s", body, r.status, r.raw, field)
		}
	}
	if r := f.do(t, f.keyA, "PUT", "/v1/account/notifications", `{"emails":"ops@acme.example"}`); r.status != 400 {
		t.Errorf("a string for the list: %d %s", r.status, r.raw)
	}
	if got := emails(f.keyA); got != "[ops@acme.example oncall@acme.example]" {
		t.Fatalf("a refused PUT changed the list: %s", got)
	}
	// Contacts are the API key holder's to set: a portal session may not.
	_, token, _ := f.session(t, f.keyA, "")
	if r := f.do(t, token, "PUT", "/v1/account/notifications", `{"emails":["x@x.example"]}`); r.status != 403 || r.code() != "not_for_portal" {
		t.Errorf("a portal session set the contacts: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyA, "PUT", "/v1/account/notifications", `{"emails":[]}`); r.status != 200 || emails(f.keyA) != "[]" {
		t.Fatalf("clearing: %d %s", r.status, r.raw)
	}
	if logs := f.logs.String(); strings.Contains(logs, "acme.example") || strings.Contains(logs, "x.example") {
		t.Errorf("an address was logged:\n%s", logs)
	}
}
