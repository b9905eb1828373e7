package httpapi_test

import (
	"testing"
)

// A filter is tested against a catalog example (the account's own) or a
// body given; a bad filter, both or neither, an unknown type or one with
// no example are clear errors.
func TestFilterTestAgainstACatalogExample(t *testing.T) {
	f := newFixture(t, nil)
	if a := f.do(t, f.keyA, "POST", "/v1/event-types", `{"name":"payout.fulfilled","example":{"event":"payout.fulfilled","payout_type":"crypto","amount":5}}`); a.status != 201 {
		t.Fatalf("catalog: %d %s", a.status, a.raw)
	}
	f.do(t, f.keyA, "POST", "/v1/event-types", `{"name":"payout.plain"}`)
	for _, c := range []struct {
		key, body string
		status    int
		want      string // "true"/"false" for matches, else the error code
	}{
		{f.keyA, `{"filter":{"payout_type":["crypto"],"amount":[{"numeric":[">",1]}]},"event_type":"payout.fulfilled"}`, 200, "true"},
		{f.keyA, `{"filter":{"payout_type":["gift_cards"]},"event_type":"payout.fulfilled"}`, 200, "false"},
		{f.keyA, `{"filter":{"payout_type":["gift_cards"]},"body":{"payout_type":"gift_cards"}}`, 200, "true"},
		{f.keyA, `{"filter":{"payout_type":"crypto"},"event_type":"payout.fulfilled"}`, 422, "invalid_filter"},
		{f.keyA, `{"event_type":"payout.fulfilled"}`, 422, "invalid_filter"},
		{f.keyA, `{"filter":{"a":["b"]}}`, 422, "invalid_request"},
		{f.keyA, `{"filter":{"a":["b"]},"event_type":"payout.fulfilled","body":{"a":"b"}}`, 422, "invalid_request"},
		{f.keyA, `{"filter":{"a":["b"]},"event_type":"payout.plain"}`, 422, "no_example"},
		{f.keyA, `{"filter":{"a":["b"]},"body":null}`, 400, "invalid_json"},
		{f.keyA, `{"filter":{"a":["b"]},"body":["b"]}`, 422, "invalid_request"},
		{f.keyA, `{"filter":{"a":["b"]},"event_type":"payout.unknown"}`, 404, "not_found"},
		{f.keyB, `{"filter":{"a":["b"]},"event_type":"payout.fulfilled"}`, 404, "not_found"}, // another account's catalog
	} {
		a := f.do(t, c.key, "POST", "/v1/filters/test", c.body)
		got := a.code()
		if a.status == 200 {
			got = map[bool]string{true: "true", false: "false"}[a.body["matches"] == true]
		}
		if a.status != c.status || got != c.want {
			t.Errorf("%s: %d %s, want %d %s", c.body, a.status, a.raw, c.status, c.want)
		}
	}
}
