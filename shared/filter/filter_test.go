package filter

import (
	"fmt"
	"strings"
	"testing"
)

const body = `{"event":"payout.paid","data":{"payout_type":"crypto","amount":12.5,"currency":"EUR",
"tags":["vip","eu"],"meta":{"region":"eu-west-1"},"note":null,"count":3}}`

func TestMatch(t *testing.T) {
	b := Decode([]byte(body))
	cases := []struct {
		pattern string
		want    bool
	}{
		{`{"event":["payout.paid"]}`, true},
		{`{"event":["payout.failed","payout.paid"]}`, true}, // OR within a field
		{`{"event":["payout.failed"]}`, false},
		{`{"data":{"payout_type":["crypto"]}}`, true},
		{`{"data":{"payout_type":["bank"]}}`, false},
		{`{"event":["payout.paid"],"data":{"payout_type":["bank"]}}`, false}, // AND across fields
		{`{"event":["payout.paid"],"data":{"payout_type":["crypto"],"currency":["EUR"]}}`, true},
		{`{"event":[{"prefix":"payout."}]}`, true},
		{`{"event":[{"prefix":"refund."}]}`, false},
		{`{"data":{"amount":[{"numeric":[">",0,"<=",20]}]}}`, true},
		{`{"data":{"amount":[{"numeric":[">",20]}]}}`, false},
		{`{"data":{"amount":[{"numeric":["=",12.5]}]}}`, true},
		{`{"data":{"currency":[{"numeric":[">",0]}]}}`, false}, // a string is not a number
		{`{"data":{"amount":[12.5]}}`, true},
		{`{"data":{"count":[3.0]}}`, true}, // numbers compare as numbers
		{`{"data":{"count":["3"]}}`, false},
		{`{"data":{"amount":[{"exists":true}]}}`, true},
		{`{"data":{"missing":[{"exists":true}]}}`, false},
		{`{"data":{"missing":[{"exists":false}]}}`, true},
		{`{"data":{"amount":[{"exists":false}]}}`, false},
		{`{"absent":{"deeper":[{"exists":false}]}}`, true}, // absent parent: absent field
		{`{"absent":{"deeper":[{"exists":true}]}}`, false},
		{`{"data":{"note":[null]}}`, true},
		{`{"data":{"note":[{"exists":true}]}}`, true}, // null is present
		{`{"data":{"currency":[{"anything-but":["USD","GBP"]}]}}`, true},
		{`{"data":{"currency":[{"anything-but":"EUR"}]}}`, false},
		{`{"data":{"missing":[{"anything-but":["x"]}]}}`, false}, // anything-but needs the field
		{`{"data":{"count":[{"anything-but":[4]}]}}`, true},
		{`{"data":{"tags":["eu"]}}`, true}, // an array matches when an element does
		{`{"data":{"tags":["us"]}}`, false},
		{`{"data":{"meta":{"region":[{"prefix":"eu-"}]}}}`, true},
		{`{"data":{"meta":["eu-west-1"]}}`, false},     // an object is no value
		{`{"event":{"sub":[{"exists":false}]}}`, true}, // a scalar has no fields
		{`{"data":{"payout_type":["crypto"]},"event":[{"exists":false}]}`, false},
	}
	for _, c := range cases {
		f, err := Compile([]byte(c.pattern))
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := f.Match(b); got != c.want {
			t.Errorf("%s: match = %v, want %v", c.pattern, got, c.want)
		}
	}
	var none *Filter
	if !none.Match(b) {
		t.Error("no filter must match every body")
	}
}

func TestCompileRefuses(t *testing.T) {
	deep := `{"a":{"b":{"c":{"d":{"e":{"f":["x"]}}}}}}`
	var fields, values []string
	for i := 0; i <= MaxFields; i++ {
		fields = append(fields, fmt.Sprintf(`"f%d":["x"]`, i))
	}
	for i := 0; i <= MaxValues; i++ {
		values = append(values, fmt.Sprintf(`"v%d"`, i))
	}
	cases := []struct{ pattern, want string }{
		{`not json`, "not JSON"},
		{`["x"]`, "must be a JSON object"},
		{`{}`, "at least one field"},
		{`{"a":{}}`, "a: an object of the filter needs at least one field"},
		{`{"a":"x"}`, "a: must be a list of values or an object"},
		{`{"a":[]}`, "a: the list of values is empty"},
		{`{"a":[[1]]}`, "is not a string, number, boolean or null"},
		{`{"a":[{"prefix":""}]}`, "prefix takes a non-empty string"},
		{`{"a":[{"prefix":"x","exists":true}]}`, "a condition has one of"},
		{`{"a":[{"suffix":"x"}]}`, `unknown condition "suffix"`},
		{`{"a":[{"exists":"yes"}]}`, "exists takes true or false"},
		{`{"a":[{"numeric":[">"]}]}`, "numeric takes one or two comparisons"},
		{`{"a":[{"numeric":["!=",1]}]}`, "is not one of"},
		{`{"a":[{"numeric":[">","1"]}]}`, "compares with a number"},
		{`{"a":[{"numeric":[">",1e999]}]}`, "compares with a number"},
		{`{"a":[{"anything-but":[]}]}`, "anything-but takes a value"},
		{`{"a":[{"anything-but":[true]}]}`, "anything-but takes strings and numbers"},
		{`{"a":["x"]} {}`, "data after"},
		{deep, "nests more than 5 levels"},
		{`{` + strings.Join(fields, ",") + `}`, fmt.Sprintf("more than %d fields", MaxFields)},
		{`{"a":[` + strings.Join(values, ",") + `]}`, fmt.Sprintf("more than %d values", MaxValues)},
		{`{"a":["` + strings.Repeat("x", MaxBytes) + `"]}`, fmt.Sprintf("more than %d", MaxBytes)},
	}
	for _, c := range cases {
		_, err := Compile([]byte(c.pattern))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: error %v, want one containing %q", c.pattern, err, c.want)
		}
	}
	// At the bounds exactly: accepted.
	if _, err := Compile([]byte(`{"a":{"b":{"c":{"d":{"e":["x"]}}}}}`)); err != nil {
		t.Errorf("depth %d refused: %v", MaxDepth, err)
	}
	if _, err := Compile([]byte(`{"a":[` + strings.Join(values[:MaxValues], ",") + `]}`)); err != nil {
		t.Errorf("%d values refused: %v", MaxValues, err)
	}
}

func TestCached(t *testing.T) {
	if f, err := Cached(""); f != nil || err != nil {
		t.Fatalf("empty: %v %v", f, err)
	}
	a, err := Cached(`{"event":["x"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Cached(`{"event":["x"]}`); a != b {
		t.Error("the same filter compiled twice")
	}
	if _, err := Cached(`{"event":"x"}`); err == nil {
		t.Error("a bad filter cached")
	}
}

func TestMatchStopsAtMaxStepsAndDelivers(t *testing.T) {
	f, err := Compile([]byte(`{"tags":[{"prefix":"zz"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	long := func(n int) Body {
		return Decode([]byte(`{"tags":[` + strings.TrimSuffix(strings.Repeat(`"a",`, n), ",") + `]}`))
	}
	if f.Match(long(MaxSteps)) {
		t.Error("an undecided-within-bounds body matched")
	}
	if !f.Match(long(MaxSteps + 1)) {
		t.Error("a body past MaxSteps must count as matching (never lose an event)")
	}
}

// BenchmarkMatchWorstCase: a filter at its bounds against a body of a long
// array (the cost Match has per endpoint and event).
func BenchmarkMatchWorstCase(b *testing.B) {
	var vals []string
	for i := 0; i < MaxValues; i++ {
		vals = append(vals, fmt.Sprintf(`{"prefix":"zz%d"}`, i))
	}
	f, err := Compile([]byte(`{"tags":[` + strings.Join(vals, ",") + `]}`))
	if err != nil {
		b.Fatal(err)
	}
	tags := make([]string, 10000)
	for i := range tags {
		tags[i] = `"aaaaaaaaaaaaaaaaaa"`
	}
	body := Decode([]byte(`{"tags":[` + strings.Join(tags, ",") + `]}`))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.Match(body)
	}
}
