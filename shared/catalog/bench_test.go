package catalog

import (
	"fmt"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"strings"
	"testing"
)

// What ingest pays per event of a catalogued type (Check), and per
// instance per type after a catalog change (Compile). Run:
// go test -run - -bench . ./shared/catalog/
func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := Compile([]byte(payoutSchema)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	s, err := Compile([]byte(payoutSchema))
	if err != nil {
		b.Fatal(err)
	}
	small := []byte(`{"event":"payout.sent","data":{"amount":5,"paid_at":"2026-12-02T10:00:00Z"}}`)
	// ~250 KiB: the largest body ingest takes, most of it one array.
	items := make([]string, 0, 5000)
	for i := range 5000 {
		items = append(items, fmt.Sprintf(`{"sku":"sku_%06d","qty":%d}`, i, i))
	}
	large := []byte(`{"event":"payout.sent","data":{"amount":5,"lines":[` + strings.Join(items, ",") + `]}}`)
	for name, body := range map[string][]byte{"small": small, "250KiB": large} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := s.Check(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The slowest checks a schema and a body within every bound can make:
// each schema's body is grown until the next step would be refused as too
// costly, so each figure is a worst case the budget admits. Run:
// go test -run - -bench CheckWorstCase ./shared/catalog/
func BenchmarkCheckWorstCase(b *testing.B) {
	numbers := func(n int) string { return strings.TrimSuffix(strings.Repeat("0,", n), ",") }
	cases := []struct {
		name, schema string
		body         func(n int) string
	}{
		{"enum-fails-on-each-item", `{"properties":{"d":{"items":{"enum":[1,2,3,4,5,6,7,8,9,10]}}}}`,
			func(n int) string { return `{"event":"x","d":[` + numbers(n) + `]}` }},
		{"type-fails-on-each-item", `{"properties":{"d":{"items":{"allOf":[` + strings.TrimSuffix(strings.Repeat(`{"type":"string"},`, 20), ",") + `]}}}}`,
			func(n int) string { return `{"event":"x","d":[` + numbers(n) + `]}` }},
		{"anyOf-fails-on-each-object", `{"properties":{"d":{"items":{"anyOf":[{"required":["a"]},{"required":["b"]},{"type":"string"}]}}}}`,
			func(n int) string {
				return `{"event":"x","d":[` + strings.TrimSuffix(strings.Repeat(`{"c":0},`, n), ",") + `]}`
			}},
		{"fan-out-on-each-item", fanOut(10),
			func(n int) string { return `{"event":"x","d":[` + numbers(n) + `]}` }},
		{"fan-out-under-items", fanOutAt(10, `"properties":{"d":{"items":{"$ref":"#/$defs/d%d"}}}`),
			func(n int) string {
				return `{"event":"x","d":[` + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + `]}`
			}},
		{"pattern-of-200-steps", `{"properties":{"s":{"pattern":"` + strings.Repeat(`[a-z]`, 96) + `x"}}}`,
			func(n int) string { return `{"event":"x","s":"` + strings.Repeat("a", n) + `"}` }},
		{"patterns-on-many-strings", `{"properties":{"d":{"items":{"pattern":"` + strings.Repeat(`[a-z]`, 96) + `x"}}}}`,
			func(n int) string {
				return `{"event":"x","d":[` + strings.TrimSuffix(strings.Repeat(`"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",`, n), ",") + `]}`
			}},
	}
	for _, c := range cases {
		s, err := Compile([]byte(c.schema))
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		// The largest n (a power-of-two search) the budget admits, within
		// the largest body ingest takes.
		admitted := func(n int) bool {
			body := c.body(n)
			if len(body) > 256<<10 {
				return false
			}
			m := meter{left: CheckBudget}
			v, _ := jsonschema.UnmarshalJSON(strings.NewReader(body))
			return m.estimate(s.s, v)
		}
		n := 1
		for admitted(n * 2) {
			n *= 2
		}
		for step := n / 2; step > 0; step /= 2 {
			if admitted(n + step) {
				n += step
			}
		}
		body := []byte(c.body(n))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := s.Check(body); err != nil && strings.Contains(err.Error(), "too costly") {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "n")
		})
	}
}
