package fakeaws

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// ddbRequest is every DynamoDB request field the fake reads.
type ddbRequest struct {
	TableName                 string            `json:"TableName"`
	Key                       Item              `json:"Key"`
	Item                      Item              `json:"Item"`
	UpdateExpression          string            `json:"UpdateExpression"`
	ExpressionAttributeNames  map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues Item              `json:"ExpressionAttributeValues"`
	ReturnValues              string            `json:"ReturnValues"`
	RequestItems              json.RawMessage   `json:"RequestItems"`
	TransactItems             []struct {
		Put            *ddbRequest `json:"Put"`
		Update         *ddbRequest `json:"Update"`
		Delete         *ddbRequest `json:"Delete"`
		ConditionCheck *ddbRequest `json:"ConditionCheck"`
	} `json:"TransactItems"`
}

func validation(format string, args ...any) *apiError {
	return badRequest("com.amazonaws.dynamodb.v20120810#ValidationException", format, args...)
}

// itemKey is where an item lives in the map: its table and its key's JSON.
func itemKey(table string, it Item) (string, error) {
	pk, ok := it[HashKey]
	if !ok {
		return "", validation("the key has no %s", HashKey)
	}
	return table + "\x00" + string(pk) + "\x00" + string(it[RangeKey]), nil
}

func (s *Server) get(table string, key Item) (Item, error) {
	k, err := itemKey(table, key)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	it := s.items[k]
	s.mu.Unlock()
	return it, nil // stored items are never changed in place: an update stores a new map
}

func (s *Server) put(table string, it Item) (old Item, err error) {
	k, err := itemKey(table, it)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	old = s.items[k]
	s.items[k] = it
	s.mu.Unlock()
	return old, nil
}

func (s *Server) del(table string, key Item) error {
	k, err := itemKey(table, key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.items, k)
	s.mu.Unlock()
	return nil
}

// update applies an UpdateItem (conditions are not evaluated: they hold).
func (s *Server) update(in *ddbRequest) (old, updated Item, err error) {
	k, err := itemKey(in.TableName, in.Key)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old = s.items[k]
	updated = make(Item, len(old)+8)
	maps.Copy(updated, old)
	maps.Copy(updated, in.Key)
	if err := applyUpdate(updated, in.UpdateExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues); err != nil {
		return nil, nil, err
	}
	s.items[k] = updated
	return old, updated, nil
}

func (s *Server) dynamo(op string, body []byte) (any, error) {
	var in ddbRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	switch op {
	case "GetItem":
		it, err := s.get(in.TableName, in.Key)
		if err != nil || it == nil {
			return struct{}{}, err
		}
		return map[string]Item{"Item": it}, nil
	case "PutItem":
		old, err := s.put(in.TableName, in.Item)
		if err == nil && in.ReturnValues == "ALL_OLD" && old != nil {
			return map[string]Item{"Attributes": old}, nil
		}
		return struct{}{}, err
	case "DeleteItem":
		return struct{}{}, s.del(in.TableName, in.Key)
	case "UpdateItem":
		old, updated, err := s.update(&in)
		if err != nil {
			return nil, err
		}
		switch in.ReturnValues {
		case "ALL_NEW", "UPDATED_NEW":
			return map[string]Item{"Attributes": updated}, nil
		case "ALL_OLD", "UPDATED_OLD":
			if old != nil {
				return map[string]Item{"Attributes": old}, nil
			}
		}
		return struct{}{}, nil
	case "BatchGetItem":
		var req map[string]struct {
			Keys []Item `json:"Keys"`
		}
		if err := json.Unmarshal(in.RequestItems, &req); err != nil {
			return nil, validation("%v", err)
		}
		resp := make(map[string][]Item, len(req))
		for table, r := range req {
			found := make([]Item, 0, len(r.Keys))
			for _, key := range r.Keys {
				it, err := s.get(table, key)
				if err != nil {
					return nil, err
				}
				if it != nil {
					found = append(found, it)
				}
			}
			resp[table] = found
		}
		return map[string]any{"Responses": resp, "UnprocessedKeys": struct{}{}}, nil
	case "BatchWriteItem":
		var req map[string][]struct {
			PutRequest *struct {
				Item Item `json:"Item"`
			} `json:"PutRequest"`
			DeleteRequest *struct {
				Key Item `json:"Key"`
			} `json:"DeleteRequest"`
		}
		if err := json.Unmarshal(in.RequestItems, &req); err != nil {
			return nil, validation("%v", err)
		}
		for table, writes := range req {
			for _, w := range writes {
				var err error
				switch {
				case w.PutRequest != nil:
					_, err = s.put(table, w.PutRequest.Item)
				case w.DeleteRequest != nil:
					err = s.del(table, w.DeleteRequest.Key)
				}
				if err != nil {
					return nil, err
				}
			}
		}
		return map[string]any{"UnprocessedItems": struct{}{}}, nil
	case "TransactWriteItems":
		// Not atomic against concurrent requests, and every condition holds.
		for _, t := range in.TransactItems {
			var err error
			switch {
			case t.Put != nil:
				_, err = s.put(t.Put.TableName, t.Put.Item)
			case t.Update != nil:
				_, _, err = s.update(t.Update)
			case t.Delete != nil:
				err = s.del(t.Delete.TableName, t.Delete.Key)
			}
			if err != nil {
				return nil, err
			}
		}
		return struct{}{}, nil
	}
	return nil, badRequest("UnknownOperationException", "DynamoDB.%s is not faked", op)
}

// applyUpdate applies an update expression's SET, REMOVE and ADD clauses to
// it, on top-level attributes only.
func applyUpdate(it Item, expr string, names map[string]string, vals Item) error {
	for _, c := range clauses(expr) {
		actions := splitTop(c.body, ',')
		for _, a := range actions {
			a = strings.TrimSpace(a)
			switch c.verb {
			case "SET":
				lhs, rhs, ok := strings.Cut(a, "=")
				if !ok {
					return validation("SET action %q has no =", a)
				}
				name, err := attrName(strings.TrimSpace(lhs), names)
				if err != nil {
					return err
				}
				v, err := evalValue(strings.TrimSpace(rhs), it, names, vals)
				if err != nil {
					return err
				}
				it[name] = v
			case "REMOVE":
				name, err := attrName(a, names)
				if err != nil {
					return err
				}
				delete(it, name)
			case "ADD":
				f := strings.Fields(a)
				if len(f) != 2 {
					return validation("ADD action %q", a)
				}
				name, err := attrName(f[0], names)
				if err != nil {
					return err
				}
				add, ok := vals[f[1]]
				if !ok {
					return validation("no value %s", f[1])
				}
				cur, ok := it[name]
				if !ok {
					it[name] = add
					continue
				}
				v, err := arith(cur, add, '+')
				if err != nil {
					return err
				}
				it[name] = v
			default:
				return validation("%s is not faked", c.verb)
			}
		}
	}
	return nil
}

type clause struct{ verb, body string }

// clauses splits an update expression at its SET, REMOVE, ADD and DELETE
// keywords (outside parentheses).
func clauses(expr string) []clause {
	var out []clause
	depth, start := 0, -1
	verb := ""
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case '(':
			depth++
			continue
		case ')':
			depth--
			continue
		}
		if depth != 0 || (i > 0 && !isSpace(expr[i-1])) {
			continue
		}
		for _, kw := range [...]string{"SET", "REMOVE", "ADD", "DELETE"} {
			end := i + len(kw)
			if end <= len(expr) && strings.EqualFold(expr[i:end], kw) && (end == len(expr) || isSpace(expr[end])) {
				if verb != "" {
					out = append(out, clause{verb, expr[start:i]})
				}
				verb, start = kw, end
				i = end - 1
				break
			}
		}
	}
	if verb != "" {
		out = append(out, clause{verb, expr[start:]})
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// splitTop splits s at sep outside parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// attrName resolves a top-level attribute path (#name or a plain name).
func attrName(p string, names map[string]string) (string, error) {
	if strings.ContainsAny(p, ".[ ") || p == "" {
		return "", validation("path %q: only top-level attributes are faked", p)
	}
	if strings.HasPrefix(p, "#") {
		n, ok := names[p]
		if !ok {
			return "", validation("no name %s", p)
		}
		return n, nil
	}
	return p, nil
}

// evalValue is a SET action's value: operand, or operand + or - operand.
func evalValue(s string, it Item, names map[string]string, vals Item) (json.RawMessage, error) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '+', '-':
			if depth == 0 {
				a, err := operand(strings.TrimSpace(s[:i]), it, names, vals)
				if err != nil {
					return nil, err
				}
				b, err := operand(strings.TrimSpace(s[i+1:]), it, names, vals)
				if err != nil {
					return nil, err
				}
				return arith(a, b, s[i])
			}
		}
	}
	return operand(s, it, names, vals)
}

func operand(s string, it Item, names map[string]string, vals Item) (json.RawMessage, error) {
	switch {
	case strings.HasPrefix(s, ":"):
		v, ok := vals[s]
		if !ok {
			return nil, validation("no value %s", s)
		}
		return v, nil
	case strings.HasPrefix(s, "if_not_exists("), strings.HasPrefix(s, "list_append("):
		fn, args, _ := strings.Cut(strings.TrimSuffix(s, ")"), "(")
		parts := splitTop(args, ',')
		if len(parts) != 2 {
			return nil, validation("%s takes two operands", fn)
		}
		if fn == "if_not_exists" {
			name, err := attrName(strings.TrimSpace(parts[0]), names)
			if err != nil {
				return nil, err
			}
			if v, ok := it[name]; ok {
				return v, nil
			}
			return operand(strings.TrimSpace(parts[1]), it, names, vals)
		}
		a, err := operand(strings.TrimSpace(parts[0]), it, names, vals)
		if err != nil {
			return nil, err
		}
		b, err := operand(strings.TrimSpace(parts[1]), it, names, vals)
		if err != nil {
			return nil, err
		}
		var la, lb struct {
			L []json.RawMessage `json:"L"`
		}
		if json.Unmarshal(a, &la) != nil || json.Unmarshal(b, &lb) != nil {
			return nil, validation("list_append of a non-list")
		}
		return json.Marshal(map[string][]json.RawMessage{"L": append(la.L, lb.L...)})
	}
	name, err := attrName(s, names)
	if err != nil {
		return nil, err
	}
	v, ok := it[name]
	if !ok {
		return nil, validation("the attribute %s in %q does not exist", name, s)
	}
	return v, nil
}

// arith adds or subtracts two numbers ({"N": ...}).
func arith(a, b json.RawMessage, op byte) (json.RawMessage, error) {
	x, err := number(a)
	if err != nil {
		return nil, err
	}
	y, err := number(b)
	if err != nil {
		return nil, err
	}
	var n string
	xi, errX := strconv.ParseInt(x, 10, 64)
	yi, errY := strconv.ParseInt(y, 10, 64)
	if errX == nil && errY == nil {
		if op == '-' {
			yi = -yi
		}
		n = strconv.FormatInt(xi+yi, 10)
	} else {
		xf, err1 := strconv.ParseFloat(x, 64)
		yf, err2 := strconv.ParseFloat(y, 64)
		if err1 != nil || err2 != nil {
			return nil, validation("not numbers: %s, %s", x, y)
		}
		if op == '-' {
			yf = -yf
		}
		n = strconv.FormatFloat(xf+yf, 'f', -1, 64)
	}
	return json.Marshal(map[string]string{"N": n})
}

func number(v json.RawMessage) (string, error) {
	var n struct {
		N *string `json:"N"`
	}
	if err := json.Unmarshal(v, &n); err != nil || n.N == nil {
		return "", validation("%s is not a number", v)
	}
	return *n.N, nil
}

// String is for debugging: the number of items held.
func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("fakeaws: %d items", len(s.items))
}
