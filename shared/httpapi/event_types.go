package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gifq/webhooks/shared/catalog"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// eventTypeView is a catalog entry as the API shows it. The schema and the
// example are the JSON they were given as (compacted).
type eventTypeView struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Example     json.RawMessage `json:"example,omitempty"`
	Deprecated  bool            `json:"deprecated"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
}

func viewEventType(et domain.EventType) eventTypeView {
	v := eventTypeView{Name: et.Name, Description: et.Description, Deprecated: et.Deprecated,
		CreatedAt: rfc3339(et.CreatedAt), UpdatedAt: rfc3339(et.UpdatedAt)}
	if et.Schema != "" {
		v.Schema = json.RawMessage(et.Schema)
	}
	if et.Example != "" {
		v.Example = json.RawMessage(et.Example)
	}
	return v
}

// maxEventTypeBody holds a schema and an example of MaxSchemaBytes each,
// with room for the name and description.
const maxEventTypeBody = 2*domain.MaxSchemaBytes + 8<<10

// maxEventTypeListBytes keeps a page of the catalog well under Lambda's
// 6 MB response limit: up to 100 entries of two 64 KiB documents each would
// not be, so a page ends early (with a cursor) when it reaches this.
const maxEventTypeListBytes = 4 << 20

func decodeEventType(body []byte, v any) (response, bool) {
	if len(body) > maxEventTypeBody {
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is larger than %d KiB", maxEventTypeBody>>10)), true
	}
	return decodeStrict(body, v, "the body is not the JSON object this route takes: ")
}

func unprocessable(code string, err error) response {
	r := fail(http.StatusUnprocessableEntity, code, err.Error())
	var p *catalog.Problem
	if errors.As(err, &p) {
		r = failAt(http.StatusUnprocessableEntity, code, err.Error(), p.Pointer)
	}
	return r
}

// failAt is fail with the JSON pointer of the value that was refused.
func failAt(status int, code, message, pointer string) response {
	r := fail(status, code, message)
	e := r.body.(errorBody)
	e.Error.Pointer = &pointer
	r.body = e
	return r
}

// compactJSON is raw without insignificant whitespace.
// setDocuments puts a schema and an example given (nil: not given) on et,
// compacted, refusing either past domain.MaxSchemaBytes; create and update
// take them the same way.
func setDocuments(et *domain.EventType, schema, example json.RawMessage) (response, bool) {
	for _, d := range []struct {
		raw  json.RawMessage
		dst  *string
		code string
		what string
	}{{schema, &et.Schema, "invalid_schema", "schema"}, {example, &et.Example, "invalid_example", "example"}} {
		if d.raw == nil {
			continue
		}
		if len(d.raw) > domain.MaxSchemaBytes {
			return fail(http.StatusUnprocessableEntity, d.code, fmt.Sprintf("the %s is larger than %d KiB", d.what, domain.MaxSchemaBytes>>10)), true
		}
		*d.dst = compactJSON(d.raw)
	}
	return response{}, false
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// checkDocuments compiles the schema (when there is one) and checks the
// example (when there is one) against it: the answer to a bad one is a 422
// saying where and why.
func checkDocuments(name, schema, example string) (response, bool) {
	var sch *catalog.Schema
	if schema != "" {
		var err error
		if sch, err = catalog.Compile([]byte(schema)); err != nil {
			return unprocessable("invalid_schema", err), true
		}
	}
	if example != "" {
		if err := catalog.CheckExample(name, sch, []byte(example)); err != nil {
			return unprocessable("invalid_example", fmt.Errorf("the example fails: %w", err)), true
		}
	}
	return response{}, false
}

func (a *API) createEventType(ctx context.Context, req *request) response {
	var in struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Example     json.RawMessage `json:"example"`
	}
	if r, failed := decodeEventType(req.body, &in); failed {
		return r
	}
	if !catalog.ValidName(in.Name) {
		return fail(http.StatusUnprocessableEntity, "invalid_name", `name must be 1-200 characters of letters, digits and . _ : / -, starting with a letter or digit (as an event's "event")`)
	}
	if descriptionTooLong(in.Description) {
		return fail(http.StatusUnprocessableEntity, "invalid_description", fmt.Sprintf("description is longer than %d characters", domain.MaxDescriptionLength))
	}
	now := domain.Millis(a.Now())
	et := domain.EventType{AccountID: req.account, Name: in.Name, Description: in.Description, CreatedAt: now, UpdatedAt: now}
	if r, failed := setDocuments(&et, in.Schema, in.Example); failed {
		return r
	}
	if r, failed := checkDocuments(et.Name, et.Schema, et.Example); failed {
		return r
	}
	switch err := a.Store.CreateEventType(ctx, et); {
	case errors.Is(err, store.ErrDuplicate):
		return fail(http.StatusConflict, "event_type_exists", "the catalog already has "+et.Name+"; change it with PATCH")
	case errors.Is(err, store.ErrLimit):
		return fail(http.StatusConflict, "event_type_limit", fmt.Sprintf("an account's catalog holds at most %d event types", domain.MaxEventTypes))
	case err != nil:
		return a.internal(ctx, err)
	}
	return ok(http.StatusCreated, viewEventType(et))
}

func (a *API) listEventTypes(ctx context.Context, req *request) response {
	for name, vs := range req.MultiValueQueryStringParameters {
		if len(vs) > 1 {
			return fail(http.StatusBadRequest, "invalid_query", name+" is given more than once")
		}
	}
	q := req.QueryStringParameters
	limit := 20
	if v, sent := q["limit"]; sent {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return fail(http.StatusBadRequest, "invalid_limit", "limit must be 1 to 100")
		}
		limit = n
	}
	after := ""
	if c := q["cursor"]; c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if after = string(b); err != nil || !catalog.ValidName(after) {
			return fail(http.StatusBadRequest, "invalid_cursor", "cursor is not one this API gave")
		}
	}
	page, err := a.Store.ListEventTypes(ctx, req.account, int32(limit), after)
	if err != nil {
		return a.internal(ctx, err)
	}
	views := make([]eventTypeView, 0, len(page.Types))
	size := 0
	for i, et := range page.Types {
		size += len(et.Schema) + len(et.Example) + len(et.Description) + 1024
		if size > maxEventTypeListBytes && i > 0 {
			page.After = page.Types[i-1].Name
			break
		}
		views = append(views, viewEventType(et))
	}
	out := list{Data: views}
	if page.After != "" {
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page.After))
	}
	return ok(http.StatusOK, out)
}

// eventTypeName is the name in the path: the rest of it, since a name may
// hold a "/" (sent as it is or as %2F).
func eventTypeName(req *request) (string, bool) {
	name := req.params[0]
	if strings.Contains(name, "%") {
		var err error
		if name, err = url.PathUnescape(name); err != nil {
			return "", false
		}
	}
	return name, catalog.ValidName(name)
}

func (a *API) loadEventType(ctx context.Context, req *request) (domain.EventType, response, bool) {
	name, valid := eventTypeName(req)
	if !valid {
		return domain.EventType{}, notFound("event type"), true
	}
	et, err := a.Store.GetEventType(ctx, req.account, name)
	if errors.Is(err, store.ErrNotFound) {
		return et, notFound("event type"), true
	}
	if err != nil {
		return et, a.internal(ctx, err), true
	}
	return et, response{}, false
}

func (a *API) getEventType(ctx context.Context, req *request) response {
	et, r, failed := a.loadEventType(ctx, req)
	if failed {
		return r
	}
	return ok(http.StatusOK, viewEventType(et))
}

// patchEventType changes a type's description, schema, example or
// deprecation. A new schema must still accept the example (the stored one
// unless a new one comes with it). Deprecating is {"deprecated": true}: the
// type still validates and delivers, and endpoints subscribed to it keep it,
// but no endpoint may newly subscribe to it; false undoes it.
func (a *API) patchEventType(ctx context.Context, req *request) response {
	et, r, failed := a.loadEventType(ctx, req)
	if failed {
		return r
	}
	var in struct {
		Description *string         `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Example     json.RawMessage `json:"example"`
		Deprecated  *bool           `json:"deprecated"`
	}
	if r, failed := decodeEventType(req.body, &in); failed {
		return r
	}
	rev := et.Rev
	if in.Description != nil {
		if descriptionTooLong(*in.Description) {
			return fail(http.StatusUnprocessableEntity, "invalid_description", fmt.Sprintf("description is longer than %d characters", domain.MaxDescriptionLength))
		}
		et.Description = *in.Description
	}
	if r, failed := setDocuments(&et, in.Schema, in.Example); failed {
		return r
	}
	if in.Deprecated != nil {
		et.Deprecated = *in.Deprecated
	}
	if in.Description == nil && in.Schema == nil && in.Example == nil && in.Deprecated == nil {
		return ok(http.StatusOK, viewEventType(et)) // nothing to change
	}
	if in.Schema != nil || in.Example != nil {
		if r, failed := checkDocuments(et.Name, et.Schema, et.Example); failed {
			return r
		}
	}
	et.UpdatedAt = domain.Millis(a.Now())
	updated, err := a.Store.UpdateEventType(ctx, et, rev)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("event type")
	case errors.Is(err, store.ErrConflict):
		return fail(http.StatusConflict, "conflict", "the event type was changed by another request meanwhile; read it again and retry")
	case err != nil:
		return a.internal(ctx, err)
	}
	return ok(http.StatusOK, viewEventType(updated))
}

// checkCatalog refuses an endpoint filter that names what the account's
// catalog does not have (or has deprecated), when the account has a catalog;
// names the endpoint already had stay allowed (catalog.CheckFilter).
func (a *API) checkCatalog(ctx context.Context, account string, filter, had []string) (response, bool) {
	if len(filter) == 0 {
		return response{}, false // every event: nothing to check
	}
	acct, err := a.Store.GetAccount(ctx, account)
	if err != nil {
		return a.internal(ctx, err), true
	}
	if acct.EventTypeCount == 0 {
		return response{}, false // no catalog: any event type, as always
	}
	types, err := a.Store.EventTypeNames(ctx, account)
	if err != nil {
		return a.internal(ctx, err), true
	}
	entries := make([]catalog.Entry, len(types))
	for i, t := range types {
		entries[i] = catalog.Entry{Name: t.Name, Deprecated: t.Deprecated}
	}
	if p := catalog.CheckFilter(filter, had, entries); !p.None() {
		return fail(http.StatusUnprocessableEntity, "unknown_event_types", "event_types must name the account's event catalog (GET /v1/event-types): "+p.String()), true
	}
	return response{}, false
}
