package catalog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The validator cannot be interrupted (no context, no budget), so a schema's
// cost is bounded before it runs: statically at compile, and per event by
// an estimate made before validating. docs/event-types.md has the figures.
const (
	// MaxSchemaNodes bounds a schema's subschemas with every $ref expanded
	// where it is used: what validating one value against it may visit.
	MaxSchemaNodes = 5000
	// MaxSchemaDepth bounds how deep subschemas nest, $refs expanded.
	MaxSchemaDepth = 64
	// MaxPatternBytes and MaxPatternInsts bound one pattern (or a key of
	// patternProperties): its source and its compiled program. Go's regexp
	// runs in time linear in the input, times the program's size.
	MaxPatternBytes = 1000
	MaxPatternInsts = 200
	// CheckBudget bounds what checking one event may cost, in units of
	// about one subschema applied to one value of the body (a pattern
	// costs its program's size times the string's length over
	// patternUnit, a format or a number keyword its length over
	// bytesUnit). BenchmarkCheckWorstCase measures the slowest check a
	// schema and a body within every bound can make.
	CheckBudget = 100_000

	patternUnit = 50  // program instructions x bytes matched, per unit
	bytesUnit   = 256 // bytes a format or a number keyword reads, per unit
)

// pattern is a compiled regular expression with its program's size, what
// a match costs per byte of input.
type pattern struct {
	*regexp.Regexp
	insts int
}

// compilePattern is the compiler's regexp engine: Go's (RE2, linear time),
// refusing a pattern whose source or program is past its bound.
func compilePattern(src string) (jsonschema.Regexp, error) {
	if len(src) > MaxPatternBytes {
		return nil, fmt.Errorf("a pattern is at most %d bytes", MaxPatternBytes)
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	if len(prog.Inst) > MaxPatternInsts {
		return nil, fmt.Errorf("the pattern is too complex: %d steps, at most %d (a bounded repeat such as {1000} counts its body that many times)", len(prog.Inst), MaxPatternInsts)
	}
	r, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	return pattern{r, len(prog.Inst)}, nil
}

func patternCost(re jsonschema.Regexp, n int) int {
	insts := MaxPatternInsts
	if p, ok := re.(pattern); ok {
		insts = p.insts
	}
	return 1 + insts*n/patternUnit
}

// subschemas are s's direct subschemas, $ref included: every field of
// jsonschema.Schema that holds one (TestSubschemasCoverEverySchemaField).
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(xs ...*jsonschema.Schema) {
		for _, x := range xs {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties,
		s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	add(s.PrefixItems...)
	for _, x := range s.Properties {
		add(x)
	}
	for _, x := range s.PatternProperties {
		add(x)
	}
	for _, x := range s.DependentSchemas {
		add(x)
	}
	for _, d := range s.Dependencies {
		if x, ok := d.(*jsonschema.Schema); ok {
			add(x)
		}
	}
	for _, a := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
		switch a := a.(type) {
		case *jsonschema.Schema:
			add(a)
		case []*jsonschema.Schema:
			add(a...)
		}
	}
	return out
}

// size is what a compiled schema expands to: nodes counts every subschema
// with each $ref expanded where it is used, depth how deep they nest.
type size struct{ nodes, depth int }

// bound refuses a schema whose expansion is past MaxSchemaNodes or
// MaxSchemaDepth, a $ref cycle (a schema that refers to itself, directly or
// through others: its expansion never ends, and {"$ref":"#"} would fail
// every event), and $dynamicRef.
func bound(root *jsonschema.Schema) *Problem {
	sizes := map[*jsonschema.Schema]size{}
	open := map[*jsonschema.Schema]bool{} // on the path being expanded
	var walk func(s *jsonschema.Schema) (size, *Problem)
	walk = func(s *jsonschema.Schema) (size, *Problem) {
		if z, ok := sizes[s]; ok {
			return z, nil
		}
		if open[s] {
			return size{}, &Problem{Reason: "the schema refers to itself through $ref (" + where(s) + "): recursive schemas are not supported; describe each level of nesting"}
		}
		if s.DynamicRef != nil || s.RecursiveRef != nil {
			return size{}, &Problem{Reason: "$dynamicRef is not supported (" + where(s) + "); use $ref"}
		}
		open[s] = true
		z := size{nodes: 1, depth: 1}
		for _, c := range subschemas(s) {
			cz, p := walk(c)
			if p != nil {
				return size{}, p
			}
			z.nodes = min(z.nodes+cz.nodes, MaxSchemaNodes+1) // no overflow on 2^n
			z.depth = max(z.depth, cz.depth+1)
		}
		delete(open, s)
		sizes[s] = z
		return z, nil
	}
	z, p := walk(root)
	switch {
	case p != nil:
		return p
	case z.nodes > MaxSchemaNodes:
		return &Problem{Reason: fmt.Sprintf("the schema is too large to check events against: more than %d subschemas once each $ref is expanded where it is used (a $ref used twice counts twice)", MaxSchemaNodes)}
	case z.depth > MaxSchemaDepth:
		return &Problem{Reason: fmt.Sprintf("the schema nests %d levels deep once each $ref is expanded, at most %d", z.depth, MaxSchemaDepth)}
	}
	return nil
}

// where is s's place in the schema, as a JSON pointer ("#/$defs/a").
func where(s *jsonschema.Schema) string {
	loc := s.Location
	for i := range len(loc) {
		if loc[i] == '#' {
			return loc[i:]
		}
	}
	return "#"
}

// meter is what a check may still spend.
type meter struct{ left int }

func (m *meter) spend(n int) bool {
	m.left -= n
	return m.left >= 0
}

// estimate charges m what validating v against s may cost, at most: each
// subschema applied to each value it can reach, as the validator does,
// counting both branches of if and every patternProperties entry. It stops,
// false, as soon as m is spent, so it costs no more than the budget.
func (m *meter) estimate(s *jsonschema.Schema, v any) bool {
	own := 1
	if s.Enum != nil {
		own += len(s.Enum.Values)
	}
	if !m.spend(own) {
		return false
	}
	if s.Bool != nil || !typeMatches(s.Types, v) { // the validator stops at a wrong type
		return true
	}
	same := []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else}
	same = append(append(append(same, s.AllOf...), s.AnyOf...), s.OneOf...)
	for _, x := range same {
		if x != nil && !m.estimate(x, v) {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return m.object(s, v)
	case []any:
		return m.array(s, v)
	case string:
		if s.Pattern != nil && !m.spend(patternCost(s.Pattern, len(v))) {
			return false
		}
		return s.Format == nil || m.spend(1+len(v)/bytesUnit)
	case json.Number:
		return m.spend(1 + len(v)/bytesUnit)
	}
	return true
}

func (m *meter) object(s *jsonschema.Schema, obj map[string]any) bool {
	if !m.spend(len(s.Required)) {
		return false
	}
	extra, _ := s.AdditionalProperties.(*jsonschema.Schema)
	for k, pv := range obj {
		if !m.spend(1) {
			return false
		}
		apply := []*jsonschema.Schema{s.Properties[k], extra, s.UnevaluatedProperties}
		for re, x := range s.PatternProperties {
			if !m.spend(patternCost(re, len(k))) {
				return false
			}
			apply = append(apply, x)
		}
		for _, x := range apply {
			if x != nil && !m.estimate(x, pv) {
				return false
			}
		}
		if s.PropertyNames != nil && !m.estimate(s.PropertyNames, k) {
			return false
		}
	}
	for name, x := range s.DependentSchemas {
		if _, ok := obj[name]; ok && !m.estimate(x, obj) {
			return false
		}
	}
	return true
}

func (m *meter) array(s *jsonschema.Schema, arr []any) bool {
	if s.UniqueItems && !m.spend(len(arr)) {
		return false
	}
	for i, item := range arr {
		if !m.spend(1) {
			return false
		}
		first := s.Items2020
		if i < len(s.PrefixItems) {
			first = s.PrefixItems[i]
		}
		for _, x := range []*jsonschema.Schema{first, s.Contains, s.UnevaluatedItems} {
			if x != nil && !m.estimate(x, item) {
				return false
			}
		}
	}
	return true
}

// typeMatches reports whether v may pass s's "type" (numbers match both
// number and integer: an estimate may only overcount).
func typeMatches(t *jsonschema.Types, v any) bool {
	if t == nil || t.IsEmpty() {
		return true
	}
	var want []string
	switch v.(type) {
	case map[string]any:
		want = []string{"object"}
	case []any:
		want = []string{"array"}
	case string:
		want = []string{"string"}
	case bool:
		want = []string{"boolean"}
	case nil:
		want = []string{"null"}
	default:
		want = []string{"number", "integer"}
	}
	for _, have := range t.ToStrings() {
		for _, w := range want {
			if have == w {
				return true
			}
		}
	}
	return false
}
