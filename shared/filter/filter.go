// Package filter is an endpoint's content filter: a small subset of
// EventBridge's event-pattern language, matched against an event's JSON body.
//
// A pattern is a JSON object that mirrors the body's nesting. Each leaf is a
// list of conditions; a field matches when any of them does (OR), and the
// pattern matches when every field does (AND). A condition is one of:
//
//	"crypto", 5, true, null           the value equals it (numbers compare as numbers)
//	{"prefix": "pay"}                 a string value starting with it
//	{"numeric": [">", 0, "<=", 5]}    a number value within one or two comparisons (=, <, <=, >, >=)
//	{"exists": true}                  the field is present (any value); false: it is absent
//	{"anything-but": ["a", 1]}        the field is present and equals none of them (a scalar or a list)
//
// When the body's value is an array, the field matches when any element does.
// Compile checks a pattern once and bounds its size (MaxBytes, MaxFields,
// MaxDepth, MaxValues); Match does no I/O.
package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// Bounds of a pattern, checked by Compile, and of one match: Match stops
// after MaxSteps comparisons (a body with long arrays) and counts the body as
// matching, so that a filter never loses an event it could not decide.
const (
	MaxSteps  = 100_000 // comparisons per Match (about 4 ms)
	MaxBytes  = 4096    // the pattern's JSON
	MaxFields = 32      // leaf fields (each with its list of conditions)
	MaxDepth  = 5       // levels of nesting, the top level being 1
	MaxValues = 100     // conditions and the values in them, over the whole pattern
)

// Filter is a compiled pattern.
type Filter struct{ root *node }

// node is one object of the pattern: its fields are either nested objects
// (children) or lists of conditions (leaves).
type node struct {
	children map[string]*node
	leaves   map[string][]cond
}

type kind int

const (
	exact kind = iota
	prefix
	numeric
	exists
	anythingBut
)

// cond is one condition of a leaf's list.
type cond struct {
	kind   kind
	value  any // exact: string, float64, bool or nil
	str    string
	ops    []cmp // numeric
	exists bool
	none   []any // anything-but: strings and float64s
}

type cmp struct {
	op string
	n  float64
}

// Compile checks src and returns its filter. The error says what is wrong
// and where (a dotted path).
func Compile(src []byte) (*Filter, error) {
	if len(src) > MaxBytes {
		return nil, fmt.Errorf("the filter is %d bytes, more than %d", len(src), MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the filter is not JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("the filter has data after its JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the filter must be a JSON object")
	}
	c := compiler{}
	root, err := c.object(obj, "", 1)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root}, nil
}

type compiler struct{ fields, values int }

func (c *compiler) object(obj map[string]any, path string, depth int) (*node, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%s: the filter nests more than %d levels", path, MaxDepth)
	}
	if len(obj) == 0 {
		return nil, fmt.Errorf("%s: an object of the filter needs at least one field", where(path))
	}
	n := &node{children: map[string]*node{}, leaves: map[string][]cond{}}
	for _, k := range sortedKeys(obj) {
		p := join(path, k)
		switch v := obj[k].(type) {
		case map[string]any:
			child, err := c.object(v, p, depth+1)
			if err != nil {
				return nil, err
			}
			n.children[k] = child
		case []any:
			if c.fields++; c.fields > MaxFields {
				return nil, fmt.Errorf("%s: the filter has more than %d fields", p, MaxFields)
			}
			if len(v) == 0 {
				return nil, fmt.Errorf("%s: the list of values is empty", p)
			}
			conds := make([]cond, 0, len(v))
			for _, e := range v {
				cd, err := c.cond(e, p)
				if err != nil {
					return nil, err
				}
				conds = append(conds, cd)
			}
			n.leaves[k] = conds
		default:
			return nil, fmt.Errorf("%s: must be a list of values or an object, as in {%q: [%s]}", p, k, jsonOf(v))
		}
	}
	return n, nil
}

func (c *compiler) count(n int, path string) error {
	if c.values += n; c.values > MaxValues {
		return fmt.Errorf("%s: the filter has more than %d values", path, MaxValues)
	}
	return nil
}

func (c *compiler) cond(e any, path string) (cond, error) {
	if err := c.count(1, path); err != nil {
		return cond{}, err
	}
	m, ok := e.(map[string]any)
	if !ok {
		v, err := scalar(e, path)
		return cond{kind: exact, value: v}, err
	}
	if len(m) != 1 {
		return cond{}, fmt.Errorf("%s: a condition has one of prefix, numeric, exists, anything-but", path)
	}
	for op, arg := range m {
		switch op {
		case "prefix":
			s, ok := arg.(string)
			if !ok || s == "" {
				return cond{}, fmt.Errorf("%s: prefix takes a non-empty string", path)
			}
			return cond{kind: prefix, str: s}, nil
		case "exists":
			b, ok := arg.(bool)
			if !ok {
				return cond{}, fmt.Errorf("%s: exists takes true or false", path)
			}
			return cond{kind: exists, exists: b}, nil
		case "numeric":
			return c.numeric(arg, path)
		case "anything-but":
			list, ok := arg.([]any)
			if !ok {
				list = []any{arg}
			}
			if len(list) == 0 {
				return cond{}, fmt.Errorf("%s: anything-but takes a value or a non-empty list", path)
			}
			if err := c.count(len(list), path); err != nil {
				return cond{}, err
			}
			cd := cond{kind: anythingBut}
			for _, x := range list {
				v, err := scalar(x, path)
				if err != nil {
					return cond{}, err
				}
				switch v.(type) {
				case string, float64:
				default:
					return cond{}, fmt.Errorf("%s: anything-but takes strings and numbers", path)
				}
				cd.none = append(cd.none, v)
			}
			return cd, nil
		default:
			return cond{}, fmt.Errorf("%s: unknown condition %q (prefix, numeric, exists, anything-but)", path, op)
		}
	}
	panic("unreachable")
}

func (c *compiler) numeric(arg any, path string) (cond, error) {
	list, ok := arg.([]any)
	if !ok || (len(list) != 2 && len(list) != 4) {
		return cond{}, fmt.Errorf(`%s: numeric takes one or two comparisons, as in [">", 0, "<=", 5]`, path)
	}
	if err := c.count(len(list)/2, path); err != nil {
		return cond{}, err
	}
	cd := cond{kind: numeric}
	for i := 0; i < len(list); i += 2 {
		op, _ := list[i].(string)
		switch op {
		case "=", "<", "<=", ">", ">=":
		default:
			return cond{}, fmt.Errorf("%s: numeric comparison %s is not one of =, <, <=, >, >=", path, jsonOf(list[i]))
		}
		n, ok := number(list[i+1])
		if !ok {
			return cond{}, fmt.Errorf("%s: numeric compares with a number, not %s", path, jsonOf(list[i+1]))
		}
		cd.ops = append(cd.ops, cmp{op, n})
	}
	return cd, nil
}

// scalar is a pattern's value as Match compares it.
func scalar(e any, path string) (any, error) {
	switch v := e.(type) {
	case string, bool, nil:
		return v, nil
	case json.Number:
		if n, ok := number(v); ok {
			return n, nil
		}
	}
	return nil, fmt.Errorf("%s: %s is not a string, number, boolean or null", path, jsonOf(e))
}

func number(e any) (float64, bool) {
	n, ok := e.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil && !math.IsInf(f, 0)
}

// Body is an event's body decoded once for matching against many filters.
type Body struct{ root map[string]any }

// Decode decodes an event's body (a JSON object). A body that is not one
// matches only patterns whose every field is {"exists": false}.
func Decode(body []byte) Body {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	_ = dec.Decode(&m)
	return Body{root: m}
}

// Match reports whether the body matches the filter. A nil filter matches
// every body.
func (f *Filter) Match(b Body) bool {
	if f == nil {
		return true
	}
	steps := 0
	return f.root.match(b.root, true, &steps) || steps > MaxSteps
}

// match: obj is the body's object at this node (present says whether the
// field holding it is there at all).
func (n *node) match(obj any, present bool, steps *int) bool {
	m, _ := obj.(map[string]any)
	for k, child := range n.children {
		v, ok := m[k]
		if !child.match(v, present && ok, steps) {
			return false
		}
	}
	for k, conds := range n.leaves {
		v, ok := m[k]
		if !leaf(conds, v, present && ok && m != nil, steps) {
			return false
		}
	}
	return true
}

// leaf: any condition holds for the value (or, for an array, any element).
// Past MaxSteps it answers false at once (Match then counts the body as
// matching).
func leaf(conds []cond, v any, present bool, steps *int) bool {
	for _, c := range conds {
		if c.kind == exists {
			if c.exists == present {
				return true
			}
			continue
		}
		if !present {
			continue
		}
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if *steps++; *steps > MaxSteps {
					return false
				}
				if c.holds(e) {
					return true
				}
			}
		} else if *steps++; c.holds(v) {
			return true
		}
	}
	return false
}

func (c cond) holds(v any) bool {
	switch c.kind {
	case exact:
		return equal(c.value, v)
	case prefix:
		s, ok := v.(string)
		return ok && strings.HasPrefix(s, c.str)
	case numeric:
		n, ok := number(v)
		if !ok {
			return false
		}
		for _, o := range c.ops {
			if !compare(n, o) {
				return false
			}
		}
		return true
	case anythingBut:
		switch v.(type) {
		case string, json.Number:
		default:
			return false
		}
		for _, x := range c.none {
			if equal(x, v) {
				return false
			}
		}
		return true
	}
	return false
}

// equal compares a pattern's scalar with a body's value.
func equal(p, v any) bool {
	switch p := p.(type) {
	case float64:
		n, ok := number(v)
		return ok && n == p
	case nil:
		return v == nil
	case string, bool:
		return p == v
	}
	return false
}

func compare(n float64, o cmp) bool {
	switch o.op {
	case "=":
		return n == o.n
	case "<":
		return n < o.n
	case "<=":
		return n <= o.n
	case ">":
		return n > o.n
	default:
		return n >= o.n
	}
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Filter{}
)

// maxCached bounds the cache of compiled filters one process keeps.
const maxCached = 1024

// Cached is Compile of a stored filter, compiled once per process. An empty
// src is no filter (nil).
func Cached(src string) (*Filter, error) {
	if src == "" {
		return nil, nil
	}
	cacheMu.Lock()
	f, ok := cache[src]
	cacheMu.Unlock()
	if ok {
		return f, nil
	}
	f, err := Compile([]byte(src))
	if err != nil {
		return nil, err
	}
	cacheMu.Lock()
	if len(cache) >= maxCached {
		clear(cache)
	}
	cache[src] = f
	cacheMu.Unlock()
	return f, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first error named is the same on every try
	return keys
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func where(path string) string {
	if path == "" {
		return "filter"
	}
	return path
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		b = append(b[:40:40], "..."...)
	}
	return string(b)
}
