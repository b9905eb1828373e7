// Package catalog decides what an account's event catalog allows: a type's
// JSON Schema (draft 2020-12) is a valid schema, its example passes it, an
// event's body passes it, and an endpoint's filter names types that exist
// and are not deprecated. It reads nothing; the store and ingest carry out.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/gifq/webhooks/shared/domain"
)

// Draft is the only $schema a catalog schema may declare (or leave out).
const Draft = "https://json-schema.org/draft/2020-12/schema"

var nameRE = regexp.MustCompile(`^` + domain.EventTypePattern + `$`)

// ValidName reports whether name is an event type as ingest accepts one.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Problem is why a schema, an example or an event is refused: where (a JSON
// pointer into the instance, "" for the whole of it) and why.
type Problem struct {
	Pointer string
	Reason  string
}

func (p *Problem) Error() string {
	if p.Pointer == "" {
		return p.Reason
	}
	return "at " + p.Pointer + ": " + p.Reason
}

// Schema is a compiled schema, safe for concurrent use.
type Schema struct{ s *jsonschema.Schema }

// refuseLoader is the compiler's only loader: a schema is self-contained.
// The library's default would read file: URLs from the function's disk, and
// an HTTP loader would let a customer make the API fetch any URL (SSRF) on
// every compile; both fail closed here.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, errors.New("references outside the schema are not allowed; put shared definitions in $defs")
}

// resourceURL is where the compiler files a schema: an http base, so a
// relative $ref resolves to a URL the loader refuses (a urn base would
// resolve it to the schema itself, a cycle found only at validation).
const resourceURL = "https://event-type.gifq.invalid/schema.json"

var printer = message.NewPrinter(language.English)

// Compile checks raw as a draft 2020-12 schema: at most MaxSchemaBytes,
// valid against the metaschema, every $ref inside it. The error is a
// *Problem saying why (its Pointer is into the schema).
func Compile(raw []byte) (*Schema, error) {
	if len(raw) > domain.MaxSchemaBytes {
		return nil, &Problem{Reason: fmt.Sprintf("the schema is larger than %d KiB", domain.MaxSchemaBytes>>10)}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Problem{Reason: "the schema is not JSON"}
	}
	switch d := doc.(type) {
	case bool:
	case map[string]any:
		if v, ok := d["$schema"]; ok && v != Draft {
			return nil, &Problem{Pointer: "/$schema", Reason: "only draft 2020-12 is supported: leave $schema out or set it to " + Draft}
		}
	default:
		return nil, &Problem{Reason: "a schema is a JSON object (or true or false)"}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	c.UseRegexpEngine(compilePattern)
	c.AssertFormat() // "format": "date-time" is checked, as producers expect
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, &Problem{Reason: err.Error()}
	}
	s, err := c.Compile(resourceURL)
	if err != nil {
		return nil, compileProblem(err).bounded()
	}
	if p := bound(s); p != nil {
		return nil, p.bounded()
	}
	return &Schema{s}, nil
}

func compileProblem(err error) *Problem {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		p := leaf(ve)
		if f, ok := deepest(ve).ErrorKind.(*kind.Format); ok && f.Want == "regex" {
			p.Reason = "not a valid pattern: " + f.Err.Error() // not the pattern quoted back
		}
		p.Reason = "not a valid JSON Schema: " + p.Reason
		return p
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return &Problem{Reason: fmt.Sprintf("$ref %s cannot be resolved: references outside the schema are not allowed; put shared definitions in $defs", strings.TrimPrefix(strings.TrimPrefix(le.URL, resourceURL), "https://event-type.gifq.invalid/"))}
	}
	return &Problem{Reason: "not a usable JSON Schema: " + strings.ReplaceAll(err.Error(), resourceURL, "")} // "#/$defs/x" not found
}

// Check validates an event body (known to be a JSON object) against s. A
// failure is a *Problem at the most specific place that failed. A body
// whose check could cost more than CheckBudget is refused unchecked.
func (s *Schema) Check(body []byte) error { return s.CheckWithin(body, nil) }

// Budget is what the checks of one request may cost together (a batch's
// events share one), in CheckBudget's units.
type Budget struct{ left int }

// BatchCheckBudget is a batch's: four events at the single bound (a batch
// carries at most 5 MB, twenty bodies of the largest size).
const BatchCheckBudget = 4 * CheckBudget

// NewBudget is a budget of units.
func NewBudget(units int) *Budget { return &Budget{left: units} }

// CheckWithin is Check drawing on b as well (nil: none): each event costs
// at most CheckBudget, and the events of b together at most what b holds.
func (s *Schema) CheckWithin(body []byte, b *Budget) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return &Problem{Reason: "not JSON"}
	}
	limit := CheckBudget
	if b != nil {
		limit = min(limit, b.left)
	}
	m := meter{left: limit}
	fits := m.estimate(s.s, v)
	if b != nil {
		b.left -= limit - max(m.left, 0)
	}
	switch {
	case !fits && limit < CheckBudget:
		return &Problem{Reason: fmt.Sprintf("the request's events together are too costly to check against their schemas (over %d units): send this one in another request", BatchCheckBudget)}
	case !fits:
		return &Problem{Reason: fmt.Sprintf("the body is too costly to check against this schema (over %d units, about one subschema applied to one value each): send smaller events or simplify the schema", CheckBudget)}
	}
	err = s.s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return leaf(ve).bounded()
	}
	return err
}

// Bounds of a Problem as answered: a refusal quotes at most this much of
// the schema or the body.
const (
	maxReasonBytes  = 300
	maxPointerBytes = 200
)

// bounded is p cut to its bounds, with the compiler's internal URL for the
// schema removed (a refusal names places as JSON pointers).
func (p *Problem) bounded() *Problem {
	r := strings.ReplaceAll(p.Reason, resourceURL, "")
	r = strings.ReplaceAll(r, "https://event-type.gifq.invalid/", "")
	return &Problem{Pointer: clip(p.Pointer, maxPointerBytes), Reason: clip(r, maxReasonBytes)}
}

// clip is s cut to at most n bytes on a rune boundary, "..." marking a cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= 3
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// leaf is the failure at the deepest instance location (the first of
// equals): "at /data/amount: must be >= 0", not "doesn't validate".
func leaf(ve *jsonschema.ValidationError) *Problem {
	best := deepest(ve)
	return &Problem{Pointer: pointer(best.InstanceLocation), Reason: best.ErrorKind.LocalizedString(printer)}
}

func deepest(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := ve
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 && (len(best.Causes) > 0 || len(e.InstanceLocation) > len(best.InstanceLocation)) {
			best = e
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return best
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// CheckExample checks an example body of type name: a JSON object of at
// most MaxSchemaBytes whose "event" is name, passing s when there is one.
func CheckExample(name string, s *Schema, example []byte) error {
	if len(example) > domain.MaxSchemaBytes {
		return &Problem{Reason: fmt.Sprintf("the example is larger than %d KiB", domain.MaxSchemaBytes>>10)}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(example, &fields); err != nil || fields == nil {
		return &Problem{Reason: "the example is an event body: a JSON object"}
	}
	var event string
	if err := json.Unmarshal(fields["event"], &event); err != nil || event != name {
		return &Problem{Pointer: "/event", Reason: fmt.Sprintf("the example is an event body: its \"event\" must be %q", name)}
	}
	if s == nil {
		return nil
	}
	return s.Check(example)
}

// Entry is what a filter check needs of a catalog type.
type Entry struct {
	Name       string
	Deprecated bool
}

// FilterProblems are the entries of an endpoint's filter the catalog does
// not allow: names it does not have (or wildcards matching none of its live
// types), and deprecated names.
type FilterProblems struct {
	Unknown    []string
	Deprecated []string
}

// None reports whether the filter is allowed.
func (f FilterProblems) None() bool { return len(f.Unknown) == 0 && len(f.Deprecated) == 0 }

func (f FilterProblems) String() string {
	var parts []string
	if len(f.Unknown) > 0 {
		parts = append(parts, "not in the event catalog: "+strings.Join(f.Unknown, ", "))
	}
	if len(f.Deprecated) > 0 {
		parts = append(parts, "deprecated (no new subscriptions): "+strings.Join(f.Deprecated, ", "))
	}
	return strings.Join(parts, "; ")
}

// CheckFilter checks an endpoint's filter against a non-empty catalog.
// "*" is always allowed; "prefix.*" must match at least one type that is
// not deprecated. Entries the endpoint already had (had) are kept as they
// are: a type deprecated after an endpoint subscribed to it still delivers
// to it, and saving the endpoint again does not drop it.
func CheckFilter(filter, had []string, types []Entry) FilterProblems {
	byName := make(map[string]Entry, len(types))
	for _, t := range types {
		byName[t.Name] = t
	}
	var out FilterProblems
	for _, f := range filter {
		if f == "*" || slices.Contains(had, f) {
			continue
		}
		if prefix, wild := strings.CutSuffix(f, "*"); wild {
			if !slices.ContainsFunc(types, func(t Entry) bool { return !t.Deprecated && strings.HasPrefix(t.Name, prefix) }) {
				out.Unknown = append(out.Unknown, f)
			}
			continue
		}
		switch t, ok := byName[f]; {
		case !ok:
			out.Unknown = append(out.Unknown, f)
		case t.Deprecated:
			out.Deprecated = append(out.Deprecated, f)
		}
	}
	return out
}
