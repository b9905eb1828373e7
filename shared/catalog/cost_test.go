package catalog

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fanOut is a schema of levels $defs, each applying the one below twice
// through allOf: about 60 bytes a level, 2^levels subschemas to validate.
func fanOut(levels int) string { return fanOutAt(levels, `"$ref":"#/$defs/d%d"`) }

// fanOutAt is fanOut applied where at says (a format of the top level's
// remaining keywords, given the top level's number).
func fanOutAt(levels int, at string) string {
	var b strings.Builder
	b.WriteString(`{"$defs":{"d0":{"type":"object"}`)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, `,"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	fmt.Fprintf(&b, `},`+at+`}`, levels)
	return b.String()
}

func nested(levels int) string {
	return strings.Repeat(`{"properties":{"a":`, levels) + `{}` + strings.Repeat(`}}`, levels)
}

// The hostile schemas: each was accepted, and then cost seconds per event
// or failed every event naming an internal URL. Each is refused at compile
// with a short reason that names no internal URL.
func TestCompileRefusesSchemasTooCostlyToCheck(t *testing.T) {
	for name, tc := range map[string]struct{ schema, reason string }{
		"$ref fan-out, 1.3 KB":     {fanOut(20), "too large to check events against"},
		"$ref fan-out, 1.1 KB":     {fanOut(17), "too large to check events against"},
		"$ref to itself":           {`{"$ref":"#"}`, "refers to itself through $ref (#)"},
		"recursion through a $def": {`{"$defs":{"a":{"properties":{"x":{"$ref":"#/$defs/b"}}},"b":{"items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`, "refers to itself"},
		"bounded repeat, 73 bytes": {`{"properties":{"data":{"properties":{"note":{"pattern":".{1000}x"}}}}}`, "too complex"},
		"alternation repeat":       {`{"properties":{"note":{"pattern":"(a|b|c|d){1000}x"}}}`, "too complex"},
		"patternProperties key":    {`{"patternProperties":{"^.{900}$":{}}}`, "too complex"},
		"pattern too long":         {`{"properties":{"n":{"pattern":"` + strings.Repeat("a", MaxPatternBytes+1) + `"}}}`, "at most 1000 bytes"},
		"too deep":                 {nested(MaxSchemaDepth + 1), "at most 64"},
		"$dynamicRef":              {`{"$dynamicAnchor":"n","properties":{"x":{"$dynamicRef":"#n"}}}`, "$dynamicRef is not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Compile([]byte(tc.schema))
			if err == nil {
				t.Fatalf("accepted (%d bytes)", len(tc.schema))
			}
			p := problem(t, err)
			if !strings.Contains(p.Reason, tc.reason) {
				t.Errorf("reason %q, want %q", p.Reason, tc.reason)
			}
			if msg := p.Error(); strings.Contains(msg, "gifq.invalid") || len(msg) > maxReasonBytes+maxPointerBytes+10 {
				t.Errorf("refusal of %d bytes: %s", len(msg), msg)
			}
		})
	}
}

func TestCompileAcceptsSchemasWithinTheBounds(t *testing.T) {
	for name, raw := range map[string]string{
		"fan-out of 10 levels": fanOut(10), // 3,070 subschemas expanded
		"nested 63 levels":     nested(MaxSchemaDepth - 1),
		"a uuid pattern":       `{"properties":{"id":{"pattern":"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"}}}`,
		"a shared $def used twice": `{"$defs":{"money":{"type":"object","properties":{"amount":{"type":"integer"},"currency":{"pattern":"^[A-Z]{3}$"}}}},` +
			`"properties":{"fee":{"$ref":"#/$defs/money"},"total":{"$ref":"#/$defs/money"}}}`,
	} {
		if _, err := Compile([]byte(raw)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A body whose check could cost more than CheckBudget is refused before
// the validator runs; a failure quotes at most a few hundred bytes of it.
func TestCheckBoundsItsCostAndWhatItQuotes(t *testing.T) {
	long := strings.Repeat("a", 100<<10)
	heavy := mustCompile(t, `{"properties":{"note":{"pattern":"`+strings.Repeat("[a-z]", 150)+`x"}}}`)
	p := problem(t, heavy.Check([]byte(`{"event":"x","note":"`+long+`"}`)))
	if !strings.Contains(p.Reason, "too costly to check") {
		t.Errorf("a 151-step pattern on 100 KiB: %.200s", p.Error())
	}
	upper := mustCompile(t, `{"properties":{"note":{"pattern":"^[A-Z]+$"}}}`)
	p = problem(t, upper.Check([]byte(`{"event":"x","note":"`+long+`"}`)))
	if p.Pointer != "/note" || len(p.Reason) > maxReasonBytes || strings.Count(p.Reason, "a") > maxReasonBytes {
		t.Errorf("a failing 100 KiB value is quoted whole: %d bytes at %q", len(p.Reason), p.Pointer)
	}
	key := strings.Repeat("k", 10<<10)
	closed := mustCompile(t, `{"properties":{"d":{"additionalProperties":{"type":"integer"}}}}`)
	p = problem(t, closed.Check([]byte(`{"event":"x","d":{"`+key+`":"s"}}`)))
	if len(p.Pointer) > maxPointerBytes || len(p.Reason) > maxReasonBytes {
		t.Errorf("a 10 KiB key: pointer %d bytes, reason %d", len(p.Pointer), len(p.Reason))
	}
	zeros := `{"event":"x","data":[` + strings.TrimSuffix(strings.Repeat("0,", 120<<10), ",") + `]}`
	enum := mustCompile(t, `{"properties":{"data":{"items":{"enum":[1,2,3,4,5,6,7,8,9,10]}}}}`)
	if p := problem(t, enum.Check([]byte(zeros))); !strings.Contains(p.Reason, "too costly") {
		t.Errorf("an enum of 10 on 122,880 values: %.200s", p.Error())
	}
}

// A large legitimate event is checked as before: 5,000 line items, each an
// object of two properties, one with a pattern.
func TestCheckAcceptsALargeOrdinaryEvent(t *testing.T) {
	s := mustCompile(t, `{"properties":{"data":{"properties":{"lines":{"items":{"type":"object","required":["sku","qty"],`+
		`"properties":{"sku":{"type":"string","pattern":"^sku_[0-9]{6}$"},"qty":{"type":"integer","minimum":0}}}}}}}}`)
	if err := s.Check(largeBody()); err != nil {
		t.Fatal(err)
	}
	if err := s.Check([]byte(strings.Replace(string(largeBody()), `"sku_004999"`, `"SKU"`, 1))); err == nil || problem(t, err).Pointer != "/data/lines/4999/sku" {
		t.Fatalf("a bad line: %v", err)
	}
}

func largeBody() []byte {
	items := make([]string, 0, 5000)
	for i := range 5000 {
		items = append(items, fmt.Sprintf(`{"sku":"sku_%06d","qty":%d}`, i, i))
	}
	return []byte(`{"event":"payout.sent","data":{"amount":5,"lines":[` + strings.Join(items, ",") + `]}}`)
}

// Every field of the library's Schema that can hold a subschema is one
// subschemas (the static bound) knows: a new applicator in a library
// upgrade fails here instead of escaping the bound.
func TestSubschemasCoverEverySchemaField(t *testing.T) {
	known := map[string]bool{"Ref": true, "RecursiveRef": true, "DynamicRef": true, "Not": true, "AllOf": true, "AnyOf": true,
		"OneOf": true, "If": true, "Then": true, "Else": true, "PropertyNames": true, "Properties": true,
		"PatternProperties": true, "AdditionalProperties": true, "Dependencies": true, "DependentSchemas": true,
		"UnevaluatedProperties": true, "Contains": true, "Items": true, "AdditionalItems": true, "PrefixItems": true,
		"Items2020": true, "UnevaluatedItems": true, "ContentSchema": true,
		// not subschemas: vocabulary extensions (none registered) and the pattern
		"Extensions": true, "Pattern": true}
	schemaType := reflect.TypeFor[jsonschema.Schema]()
	for i := range schemaType.NumField() {
		f := schemaType.Field(i)
		if !f.IsExported() {
			continue
		}
		holds := strings.Contains(f.Type.String(), "Schema") || f.Type.Kind() == reflect.Interface
		if holds && !known[f.Name] {
			t.Errorf("jsonschema.Schema.%s (%s) may hold subschemas the bound does not count", f.Name, f.Type)
		}
	}
}

// A batch's events share one budget: each within CheckBudget, together
// within BatchCheckBudget; past it the rest are refused unchecked.
func TestABatchSharesOneCheckBudget(t *testing.T) {
	s := mustCompile(t, `{"properties":{"d":{"items":{"type":"integer"}}}}`)
	body := []byte(`{"event":"x","d":[` + strings.TrimSuffix(strings.Repeat("1,", 30000), ",") + `]}`) // ~90,000 units
	b := NewBudget(BatchCheckBudget)
	for i := 0; i < 4; i++ {
		if err := s.CheckWithin(body, b); err != nil {
			t.Fatalf("event %d within the batch's budget: %v", i+1, err)
		}
	}
	if p := problem(t, s.CheckWithin(body, b)); !strings.Contains(p.Reason, "events together are too costly") {
		t.Fatalf("the fifth: %v", p)
	}
	if err := s.Check(body); err != nil {
		t.Fatalf("the same event alone: %v", err)
	}
}
