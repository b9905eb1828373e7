package ingest

import (
	"context"
	"errors"
	"sync"

	"github.com/gifq/webhooks/shared/catalog"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// SchemaError: the body fails the JSON Schema of its event type in the
// account's catalog. Nothing was stored.
type SchemaError struct {
	EventType string
	Problem   *catalog.Problem
}

func (e *SchemaError) Error() string {
	where := "the body"
	if e.Problem.Pointer != "" {
		where = e.Problem.Pointer
	}
	return "the body fails the schema of event type " + e.EventType + " at " + where + ": " + e.Problem.Reason
}

// maxCachedSchemaBytes bounds the schema cache of one Lambda instance by
// the schemas' source size: a compiled schema holds about 30 times its
// source in memory (a 40 KB schema, 1.2 MB), so 2 MiB of schemas is about
// 60 MB of the api function's 256. Past it the cache starts again empty (a
// reload is one read per type used).
const maxCachedSchemaBytes = 2 << 20

// schemaCache keeps the compiled schemas of the catalogs this instance has
// seen, per account, for one catalog version. The version rides on the
// account item that ingest reads anyway (Account.CatalogVersion), so a
// changed catalog is seen by the very next event, and an unchanged one costs
// no read at all: only the first event of a type after a change (per
// instance) reads its entry and compiles its schema.
type schemaCache struct {
	mu       sync.Mutex
	accounts map[string]*accountSchemas
	bytes    int // the cached schemas' source size
}

type accountSchemas struct {
	version int64
	types   map[string]*catalog.Schema // nil: no schema (or not in the catalog)
}

func (c *schemaCache) lookup(account string, version int64, eventType string) (*catalog.Schema, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.accounts[account]
	if a == nil || a.version != version {
		return nil, false
	}
	s, ok := a.types[eventType]
	return s, ok
}

func (c *schemaCache) store(account string, version int64, eventType string, s *catalog.Schema, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.accounts == nil || c.bytes+size > maxCachedSchemaBytes {
		c.accounts, c.bytes = map[string]*accountSchemas{}, 0
	}
	c.bytes += size
	a := c.accounts[account]
	if a == nil || a.version != version {
		a = &accountSchemas{version: version, types: map[string]*catalog.Schema{}}
		c.accounts[account] = a
	}
	a.types[eventType] = s
}

// schemaFor is the compiled schema of eventType in acct's catalog, or nil
// when the account has no catalog, the catalog has no such type (it still
// ingests: the catalog is optional per account and names only the types its
// owner chose to describe) or the type has no schema.
func (s *Service) schemaFor(ctx context.Context, acct domain.Account, eventType string) (*catalog.Schema, error) {
	if acct.EventTypeCount == 0 {
		return nil, nil
	}
	if sch, ok := s.schemas.lookup(acct.ID, acct.CatalogVersion, eventType); ok {
		return sch, nil
	}
	et, err := s.Store.GetEventType(ctx, acct.ID, eventType)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	var sch *catalog.Schema
	if et.Schema != "" {
		// The API compiled it before storing it; failing now means it was
		// written another way. Refuse the event rather than skip the check.
		if sch, err = catalog.Compile([]byte(et.Schema)); err != nil {
			return nil, errors.New("event type " + eventType + ": stored schema does not compile: " + err.Error())
		}
	}
	s.schemas.store(acct.ID, acct.CatalogVersion, eventType, sch, len(et.Schema)+len(eventType))
	return sch, nil
}

// checkSchema validates a body against its type's schema, when there is
// one, drawing on budget (a batch's, shared by its events; nil: none).
func (s *Service) checkSchema(ctx context.Context, acct domain.Account, p checked, budget *catalog.Budget) error {
	sch, err := s.schemaFor(ctx, acct, p.eventType)
	if err != nil || sch == nil {
		return err
	}
	if err := sch.CheckWithin(p.body, budget); err != nil {
		var prob *catalog.Problem
		if errors.As(err, &prob) {
			return &SchemaError{EventType: p.eventType, Problem: prob}
		}
		return err
	}
	return nil
}
