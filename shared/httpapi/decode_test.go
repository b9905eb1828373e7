package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// A null anywhere in a body's objects is refused, not read as "absent":
// Schemathesis found `"settings": {"timeout_seconds": null}` accepted as
// no change, where the document says an integer.
func TestDecodeStrictRefusesNullsAtAnyDepth(t *testing.T) {
	var v struct {
		Settings struct {
			TimeoutSeconds *int `json:"timeout_seconds"`
		} `json:"settings"`
	}
	for body, field := range map[string]string{
		`{"settings":null}`:                                     "settings",
		`{"settings":{"timeout_seconds":null}}`:                 "settings.timeout_seconds",
		`{"settings":{"headers":{"Authorization":null}}}`:       "settings.headers.Authorization",
		`{"settings":{"timeout_seconds":5},"description":null}`: "description",
	} {
		r, failed := decodeStrict([]byte(body), &v, "")
		if !failed || r.status != http.StatusBadRequest {
			t.Fatalf("%s: accepted", body)
		}
		if msg := r.body.(errorBody).Error.Message; !strings.Contains(msg, "field "+field+" is null") {
			t.Errorf("%s: %q, want it to name %s", body, msg, field)
		}
	}
	if _, failed := decodeStrict([]byte(`{"settings":{"timeout_seconds":5}}`), &v, ""); failed {
		t.Fatal("a body without nulls refused")
	}
}
