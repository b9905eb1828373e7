package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

const payoutSchema = `{"type":"object","required":["event","data"],"properties":{"data":{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":0}}}}}`

// eventType creates a catalog entry and fails the test unless it is 201.
func (f *fixture) eventType(t *testing.T, key, body string) answer {
	t.Helper()
	a := f.do(t, key, "POST", "/v1/event-types", body)
	if a.status != 201 {
		t.Fatalf("create event type: %d %s", a.status, a.raw)
	}
	return a
}

func pointerOf(a answer) (string, bool) {
	e, _ := a.body["error"].(map[string]any)
	p, ok := e["pointer"].(string)
	return p, ok
}

func TestEventTypeCreateGetListPatch(t *testing.T) {
	f := newFixture(t, nil)
	created := f.eventType(t, f.keyA, `{"name":"payout.sent","description":"a payout left","schema":`+payoutSchema+
		`,"example":{"event":"payout.sent","data":{"amount":100}}}`)
	if created.body["deprecated"] != false || created.body["schema"].(map[string]any)["type"] != "object" {
		t.Fatalf("created: %s", created.raw)
	}
	f.eventType(t, f.keyA, `{"name":"partner/payout:v2","description":"no schema: any body"}`)
	for i := range 3 {
		f.eventType(t, f.keyA, fmt.Sprintf(`{"name":"t.%d"}`, i))
	}

	// A name with a "/" is the rest of the path, sent as it is or escaped.
	for _, path := range []string{"/v1/event-types/partner/payout:v2", "/v1/event-types/" + url.PathEscape("partner/payout:v2")} {
		if a := f.do(t, f.keyA, "GET", path, ""); a.status != 200 || a.body["name"] != "partner/payout:v2" {
			t.Fatalf("GET %s: %d %s", path, a.status, a.raw)
		}
	}
	if a := f.do(t, f.keyB, "GET", "/v1/event-types/payout.sent", ""); a.status != 404 {
		t.Fatalf("another account's type: %d", a.status)
	}

	var names []string
	cursor := ""
	for page := 0; ; page++ {
		a := f.doRequest(t, getWithQuery(f.keyA, "/v1/event-types", url.Values{"limit": {"2"}, "cursor": {cursor}}))
		if a.status != 200 || page > 4 {
			t.Fatalf("list: %d %s", a.status, a.raw)
		}
		for _, d := range a.body["data"].([]any) {
			names = append(names, d.(map[string]any)["name"].(string))
		}
		if cursor = a.body["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if fmt.Sprint(names) != "[partner/payout:v2 payout.sent t.0 t.1 t.2]" {
		t.Fatalf("listed %v", names)
	}
	if a := f.doRequest(t, getWithQuery(f.keyA, "/v1/event-types", url.Values{"limit": {"101"}})); a.status != 400 || a.code() != "invalid_limit" {
		t.Fatalf("limit 101: %d %s", a.status, a.raw)
	}
	if a := f.doRequest(t, getWithQuery(f.keyA, "/v1/event-types", url.Values{"cursor": {"!!"}})); a.status != 400 || a.code() != "invalid_cursor" {
		t.Fatalf("bad cursor: %d %s", a.status, a.raw)
	}

	a := f.do(t, f.keyA, "PATCH", "/v1/event-types/payout.sent", `{"deprecated":true,"description":"use payout.sent.v2"}`)
	if a.status != 200 || a.body["deprecated"] != true || a.body["description"] != "use payout.sent.v2" || a.body["example"] == nil {
		t.Fatalf("deprecate: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/event-types/payout.sent", `{"name":"other"}`); a.status != 400 {
		t.Fatalf("renaming: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/event-types/nope", `{"deprecated":true}`); a.status != 404 {
		t.Fatalf("patching a missing type: %d", a.status)
	}
}

func getWithQuery(key, path string, q url.Values) (in events.APIGatewayProxyRequest) {
	in.HTTPMethod, in.Path, in.Headers = "GET", path, map[string]string{"Authorization": "Bearer " + key}
	in.QueryStringParameters = map[string]string{}
	for k, v := range q {
		in.QueryStringParameters[k] = v[0]
	}
	return in
}

// Every refusal is a clear 4xx that stores nothing.
func TestEventTypeRefusesBadInputAndStoresNothing(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct {
		name, body string
		status     int
		code       string
		pointer    string // "-": no pointer in the answer
		inMessage  string
	}{
		{"bad name", `{"name":"has space"}`, 422, "invalid_name", "-", "name must be"},
		{"no name", `{"description":"x"}`, 422, "invalid_name", "-", "name must be"},
		{"null field", `{"name":"a.b","schema":null}`, 400, "invalid_json", "-", "null"},
		{"unknown field", `{"name":"a.b","schemas":{}}`, 400, "invalid_json", "-", "schemas"},
		{"invalid schema", `{"name":"a.b","schema":{"type":"strin"}}`, 422, "invalid_schema", "/type", "not a valid JSON Schema"},
		{"schema of another draft", `{"name":"a.b","schema":{"$schema":"http://json-schema.org/draft-07/schema#"}}`, 422, "invalid_schema", "/$schema", "2020-12"},
		{"remote $ref", `{"name":"a.b","schema":{"$ref":"https://example.com/s.json"}}`, 422, "invalid_schema", "", "references outside the schema"},
		{"$ref to itself", `{"name":"a.b","schema":{"$ref":"#"}}`, 422, "invalid_schema", "", "refers to itself"},
		{"$ref fan-out", `{"name":"a.b","schema":` + refFanOut(17) + `}`, 422, "invalid_schema", "", "too large to check events against"},
		{"bounded repeat", `{"name":"a.b","schema":{"properties":{"note":{"pattern":".{1000}x"}}}}`, 422, "invalid_schema", "/properties/note/pattern", "too complex"},
		{"example fails its schema", `{"name":"a.b","schema":` + payoutSchema + `,"example":{"event":"a.b","data":{"amount":-1}}}`, 422, "invalid_example", "/data/amount", "minimum"},
		{"example of another type", `{"name":"a.b","example":{"event":"c.d"}}`, 422, "invalid_example", "/event", "must be"},
		{"schema too large", `{"name":"a.b","schema":{"description":"` + strings.Repeat("x", 64<<10) + `"}}`, 422, "invalid_schema", "-", "64 KiB"},
		{"body too large", `{"name":"a.b","description":"` + strings.Repeat("x", 300<<10) + `"}`, 413, "body_too_large", "-", "KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.calls.Reset()
			a := f.do(t, f.keyA, "POST", "/v1/event-types", c.body)
			if a.status != c.status || a.code() != c.code || !strings.Contains(a.raw, c.inMessage) {
				t.Fatalf("%d %s", a.status, a.raw)
			}
			p, has := pointerOf(a)
			if c.pointer == "-" && has || c.pointer != "-" && p != c.pointer {
				t.Fatalf("pointer %q (%v), want %q: %s", p, has, c.pointer, a.raw)
			}
			if w := f.calls.Count("DynamoDB.TransactWriteItems") + f.calls.Count("DynamoDB.PutItem"); w != 0 {
				t.Fatalf("%d writes for a refused type", w)
			}
		})
	}
	f.calls.Reset()
	f.eventType(t, f.keyA, `{"name":"a.b","schema":`+payoutSchema+`,"example":{"event":"a.b","data":{"amount":1}}}`)
	if w := f.calls.Count("DynamoDB.TransactWriteItems"); w != 1 {
		t.Fatalf("an accepted type: %d transactions, want 1 (the count above would not see a write)", w)
	}
	if a := f.do(t, f.keyA, "POST", "/v1/event-types", `{"name":"a.b"}`); a.status != 409 || a.code() != "event_type_exists" {
		t.Fatalf("the same name again: %d %s", a.status, a.raw)
	}
	// A new schema must accept the stored example; a refused patch changes nothing.
	for _, body := range []string{
		`{"schema":{"type":"object","required":["other"]},"description":"changed"}`,
		`{"example":{"event":"a.b","data":{}},"description":"changed"}`,
		`{"schema":{"type":"nope"},"description":"changed"}`,
	} {
		if a := f.do(t, f.keyA, "PATCH", "/v1/event-types/a.b", body); a.status != 422 {
			t.Fatalf("PATCH %s: %d %s", body, a.status, a.raw)
		}
	}
	if a := f.do(t, f.keyA, "GET", "/v1/event-types/a.b", ""); a.body["description"] != "" {
		t.Fatalf("a refused patch changed the type: %s", a.raw)
	}
	// With its example, a new schema goes.
	if a := f.do(t, f.keyA, "PATCH", "/v1/event-types/a.b", `{"schema":{"type":"object","required":["other"]},"example":{"event":"a.b","other":1}}`); a.status != 200 {
		t.Fatalf("schema and example together: %d %s", a.status, a.raw)
	}
}

// ingest checks an event of a catalogued type against its schema, single
// and batch: 422 with the pointer, nothing stored. A type the catalog does
// not have still goes, and a changed schema holds from the next event.
func TestIngestChecksTheCatalogsSchema(t *testing.T) {
	f := newFixture(t, nil)
	f.eventType(t, f.keyA, `{"name":"payout.sent","schema":`+payoutSchema+`}`)

	f.calls.Reset()
	a := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.sent","data":{"amount":-5}}`)
	if p, _ := pointerOf(a); a.status != 422 || a.code() != "schema_mismatch" || p != "/data/amount" || !strings.Contains(a.raw, "minimum") {
		t.Fatalf("an invalid event: %d %s", a.status, a.raw)
	}
	if w := f.calls.Count("DynamoDB.TransactWriteItems"); w != 0 {
		t.Fatalf("a refused event was written (%d transactions)", w)
	}
	if a := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.sent"}`); a.status != 422 {
		t.Fatalf("missing data: %d %s", a.status, a.raw)
	} else if p, has := pointerOf(a); !has || p != "" {
		t.Fatalf("a failure at the root has pointer \"\": %s", a.raw)
	}
	for _, body := range []string{`{"event":"payout.sent","data":{"amount":5}}`, `{"event":"not.in.catalog","anything":true}`} {
		if a := f.do(t, f.keyA, "POST", "/v1/events", body); a.status != 202 {
			t.Fatalf("%s: %d %s", body, a.status, a.raw)
		}
	}
	// Another account's catalog is its own: account B has none.
	if a := f.do(t, f.keyB, "POST", "/v1/events", `{"event":"payout.sent","data":{"amount":-5}}`); a.status != 202 {
		t.Fatalf("account without a catalog: %d %s", a.status, a.raw)
	}

	batch := `{"events":[{"body":{"event":"payout.sent","data":{"amount":1}}},{"body":{"event":"payout.sent","data":{"amount":"1"}}},{"body":{"event":"other"}}]}`
	a = f.do(t, f.keyA, "POST", "/v1/events/batch", batch)
	if a.status != 200 || a.body["accepted"] != 2.0 || a.body["refused"] != 1.0 {
		t.Fatalf("batch: %d %s", a.status, a.raw)
	}
	refused := a.body["results"].([]any)[1].(map[string]any)
	if e := refused["error"].(map[string]any); refused["status"] != 422.0 || e["code"] != "schema_mismatch" || e["pointer"] != "/data/amount" {
		t.Fatalf("the refused item: %v", refused)
	}

	// A new schema holds from the very next event (the catalog's version).
	if a := f.do(t, f.keyA, "PATCH", "/v1/event-types/payout.sent", `{"schema":{"type":"object","required":["currency"]}}`); a.status != 200 {
		t.Fatalf("patch: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.sent","data":{"amount":5}}`); a.status != 422 || !strings.Contains(a.raw, "currency") {
		t.Fatalf("after the schema changed: %d %s", a.status, a.raw)
	}
	// Deprecated: still validated, still delivered.
	f.do(t, f.keyA, "PATCH", "/v1/event-types/payout.sent", `{"deprecated":true}`)
	if a := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.sent","data":{"amount":5}}`); a.status != 422 {
		t.Fatalf("deprecated, invalid: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.sent","currency":"EUR"}`); a.status != 202 {
		t.Fatalf("deprecated, valid: %d %s", a.status, a.raw)
	}
}

// With a catalog, an event costs the same reads as without once its type's
// schema is cached: the one query of the account's partition.
func TestIngestWithACatalogAddsNoReadPerEvent(t *testing.T) {
	f := newFixture(t, nil)
	f.endpoint(t, f.keyA)
	f.endpoint(t, f.keyB)
	f.eventType(t, f.keyA, `{"name":"payout.sent","schema":`+payoutSchema+`}`)
	body := `{"event":"payout.sent","data":{"amount":5}}`
	cost := func(key string) string {
		f.calls.Reset()
		if a := f.do(t, key, "POST", "/v1/events", body); a.status != 202 {
			t.Fatalf("%d %s", a.status, a.raw)
		}
		return f.calls.String()
	}
	first := cost(f.keyA) // reads the type's entry once
	warm, without := cost(f.keyA), cost(f.keyB)
	if warm != without {
		t.Fatalf("an event with a cached schema: %s; without a catalog: %s", warm, without)
	}
	if first == warm {
		t.Fatalf("the first event read no entry (%s): is the schema checked at all?", first)
	}
}

// Endpoints subscribe to the catalog by name once the account has one.
func TestEndpointsSubscribeToTheCatalog(t *testing.T) {
	f := newFixture(t, nil)
	// No catalog: any name, as always.
	if a := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/a","event_types":["anything.goes"]}`); a.status != 201 {
		t.Fatalf("no catalog: %d %s", a.status, a.raw)
	}
	id := f.endpoint(t, f.keyA) // payout.*
	f.eventType(t, f.keyA, `{"name":"payout.sent"}`)
	f.eventType(t, f.keyA, `{"name":"payout.failed"}`)
	f.eventType(t, f.keyA, `{"name":"invoice.paid"}`)
	f.do(t, f.keyA, "PATCH", "/v1/event-types/invoice.paid", `{"deprecated":true}`)

	for _, c := range []struct {
		types  string
		status int
		names  []string
	}{
		{`["payout.sent","payout.failed"]`, 201, nil},
		{`["payout.*"]`, 201, nil},
		{`["*"]`, 201, nil},
		{`[]`, 201, nil},
		{`["payout.sent","payout.lost","refund.*"]`, 422, []string{"payout.lost", "refund.*"}},
		{`["invoice.paid"]`, 422, []string{"deprecated", "invoice.paid"}},
		{`["invoice.*"]`, 422, []string{"invoice.*"}},
	} {
		f.calls.Reset()
		a := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/b","event_types":`+c.types+`}`)
		if a.status != c.status {
			t.Fatalf("%s: %d %s", c.types, a.status, a.raw)
		}
		if c.status != 422 {
			f.do(t, f.keyA, "DELETE", "/v1/endpoints/"+a.body["id"].(string), "")
			continue
		}
		if a.code() != "unknown_event_types" {
			t.Fatalf("%s: %s", c.types, a.raw)
		}
		for _, n := range c.names {
			if !strings.Contains(a.body["error"].(map[string]any)["message"].(string), n) {
				t.Errorf("%s: the message does not name %s: %s", c.types, n, a.raw)
			}
		}
		if w := f.calls.Count("DynamoDB.TransactWriteItems"); w != 0 {
			t.Fatalf("%s: a refused endpoint was written", c.types)
		}
	}

	// PATCH: new names are checked, names the endpoint had are kept.
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"event_types":["payout.lost"]}`); a.status != 422 {
		t.Fatalf("patch to an unknown type: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"event_types":["invoice.paid"]}`); a.status != 422 {
		t.Fatalf("patch to a deprecated type: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, ""); fmt.Sprint(a.body["event_types"]) != "[payout.*]" {
		t.Fatalf("a refused patch changed the endpoint: %s", a.raw)
	}
	f.do(t, f.keyA, "PATCH", "/v1/event-types/payout.sent", `{"deprecated":true}`)
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"event_types":["payout.sent"]}`); a.status != 422 {
		t.Fatalf("newly subscribing to a type deprecated since: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"event_types":["payout.*","payout.failed"]}`); a.status != 200 {
		t.Fatalf("keeping payout.* (still matches payout.failed): %d %s", a.status, a.raw)
	}
}

// The portal reads the catalog and cannot change it.
func TestPortalReadsTheCatalog(t *testing.T) {
	f := newFixture(t, nil)
	f.eventType(t, f.keyA, `{"name":"payout.sent","description":"a payout left"}`)
	_, token, _ := f.session(t, f.keyA, "")
	if a := f.do(t, token, "GET", "/v1/event-types", ""); a.status != 200 || len(a.body["data"].([]any)) != 1 {
		t.Fatalf("list: %d %s", a.status, a.raw)
	}
	if a := f.do(t, token, "GET", "/v1/event-types/payout.sent", ""); a.status != 200 {
		t.Fatalf("get: %d %s", a.status, a.raw)
	}
	for _, c := range [][2]string{{"POST", "/v1/event-types"}, {"PATCH", "/v1/event-types/payout.sent"}} {
		if a := f.do(t, token, c[0], c[1], `{"name":"x.y","deprecated":true}`); a.status != 403 || a.code() != "not_for_portal" {
			t.Fatalf("%s %s with a portal token: %d %s", c[0], c[1], a.status, a.raw)
		}
	}
	var v map[string]any
	_ = json.Unmarshal([]byte(f.do(t, f.keyA, "GET", "/v1/event-types/payout.sent", "").raw), &v)
	if v["deprecated"] != false {
		t.Fatalf("the portal changed the type: %v", v)
	}
}

// refFanOut is a schema whose levels each apply the one below twice
// through allOf (2^levels subschemas to validate in ~60 bytes a level).
func refFanOut(levels int) string {
	var b strings.Builder
	b.WriteString(`{"$defs":{"d0":{"type":"object"}`)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, `,"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	fmt.Fprintf(&b, `},"$ref":"#/$defs/d%d"}`, levels)
	return b.String()
}
