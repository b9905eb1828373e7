package catalog

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/domain"
)

const payoutSchema = `{"type":"object","required":["event","data"],"properties":{
	"event":{"const":"payout.sent"},
	"data":{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":0},"paid_at":{"type":"string","format":"date-time"}}}}}`

func mustCompile(t *testing.T, raw string) *Schema {
	t.Helper()
	s, err := Compile([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func problem(t *testing.T, err error) *Problem {
	t.Helper()
	var p *Problem
	if !errors.As(err, &p) {
		t.Fatalf("want a *Problem, got %v", err)
	}
	return p
}

func TestCompileRefusesWhatIsNotADraft2020Schema(t *testing.T) {
	for name, tc := range map[string]struct{ schema, pointer, reason string }{
		"not json":      {`{"type":`, "", "not JSON"},
		"not an object": {`[1]`, "", "JSON object"},
		"bad type":      {`{"type":"strin"}`, "/type", "not a valid JSON Schema"},
		"bad minimum":   {`{"properties":{"a":{"minimum":"0"}}}`, "/properties/a/minimum", "not a valid JSON Schema"},
		"other draft":   {`{"$schema":"http://json-schema.org/draft-07/schema#"}`, "/$schema", "only draft 2020-12"},
		"remote ref":    {`{"$ref":"https://example.com/s.json"}`, "", "references outside the schema"},
		"file ref":      {`{"$ref":"file:///etc/passwd"}`, "", "references outside the schema"},
		"relative ref":  {`{"$ref":"other.json"}`, "", "references outside the schema"},
		"missing $defs": {`{"$ref":"#/$defs/nope"}`, "", "nope"},
		"bad regexp":    {`{"pattern":"a(b"}`, "/pattern", "not a valid JSON Schema"},
		"too large":     {`{"description":"` + strings.Repeat("x", domain.MaxSchemaBytes) + `"}`, "", "larger than 64 KiB"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Compile([]byte(tc.schema))
			p := problem(t, err)
			if p.Pointer != tc.pointer || !strings.Contains(p.Reason, tc.reason) {
				t.Fatalf("got %q at %q, want %q at %q", p.Reason, p.Pointer, tc.reason, tc.pointer)
			}
		})
	}
}

func TestCompileAcceptsSelfContainedSchemas(t *testing.T) {
	for _, raw := range []string{`true`, `{}`, payoutSchema,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"amt":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/amt"}}}`,
		`{"$id":"https://example.com/payout.json","$defs":{"amt":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/amt"}}}`,
	} {
		mustCompile(t, raw)
	}
}

func TestCheckNamesTheDeepestFailure(t *testing.T) {
	s := mustCompile(t, payoutSchema)
	if err := s.Check([]byte(`{"event":"payout.sent","data":{"amount":5,"paid_at":"2026-12-02T10:00:00Z"}}`)); err != nil {
		t.Fatalf("a valid body: %v", err)
	}
	for body, want := range map[string]Problem{
		`{"event":"payout.sent","data":{"amount":-1}}`:                   {"/data/amount", "minimum"},
		`{"event":"payout.sent","data":{"amount":"5"}}`:                  {"/data/amount", "want integer"},
		`{"event":"payout.sent"}`:                                        {"", "missing property 'data'"},
		`{"event":"payout.sent","data":{"amount":1,"paid_at":"monday"}}`: {"/data/paid_at", "date-time"},
	} {
		p := problem(t, s.Check([]byte(body)))
		if p.Pointer != want.Pointer || !strings.Contains(p.Reason, want.Reason) {
			t.Errorf("%s: got %q at %q, want %q at %q", body, p.Reason, p.Pointer, want.Reason, want.Pointer)
		}
	}
}

func TestCheckExample(t *testing.T) {
	s := mustCompile(t, payoutSchema)
	if err := CheckExample("payout.sent", s, []byte(`{"event":"payout.sent","data":{"amount":1}}`)); err != nil {
		t.Fatal(err)
	}
	if err := CheckExample("payout.sent", nil, []byte(`{"event":"payout.sent"}`)); err != nil {
		t.Fatalf("no schema: %v", err)
	}
	for ex, pointer := range map[string]string{
		`{"event":"payout.sent","data":{"amount":-3}}`: "/data/amount",
		`{"event":"payout.other","data":{"amount":1}}`: "/event",
		`{"data":{"amount":1}}`:                        "/event",
		`[]`:                                           "",
	} {
		if p := problem(t, CheckExample("payout.sent", s, []byte(ex))); p.Pointer != pointer {
			t.Errorf("%s: pointer %q (%s), want %q", ex, p.Pointer, p.Reason, pointer)
		}
	}
}

func TestCheckFilter(t *testing.T) {
	types := []Entry{{"payout.sent", false}, {"payout.failed", false}, {"invoice.paid", true}}
	for name, tc := range map[string]struct {
		filter, had []string
		want        FilterProblems
	}{
		"known":                    {filter: []string{"payout.sent", "payout.failed"}},
		"everything":               {filter: []string{"*"}},
		"wildcard with live type":  {filter: []string{"payout.*"}},
		"unknown":                  {filter: []string{"payout.sent", "payout.lost", "refund.*"}, want: FilterProblems{Unknown: []string{"payout.lost", "refund.*"}}},
		"deprecated":               {filter: []string{"invoice.paid"}, want: FilterProblems{Deprecated: []string{"invoice.paid"}}},
		"wildcard only deprecated": {filter: []string{"invoice.*"}, want: FilterProblems{Unknown: []string{"invoice.*"}}},
		"kept from before":         {filter: []string{"invoice.paid", "legacy.thing"}, had: []string{"invoice.paid", "legacy.thing"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := CheckFilter(tc.filter, tc.had, types)
			if !reflect.DeepEqual(got, tc.want) || got.None() != tc.want.None() {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestValidNameIsIngestsPattern(t *testing.T) {
	for name, want := range map[string]bool{"payout.sent": true, "a:b/c-d_e": true, "": false, ".x": false, "a b": false, strings.Repeat("a", 201): false} {
		if ValidName(name) != want {
			t.Errorf("%q: %v", name, !want)
		}
	}
}
