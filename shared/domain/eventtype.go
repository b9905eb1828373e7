package domain

// Limits of the event catalog.
const (
	// MaxEventTypes is how many types an account's catalog may hold.
	MaxEventTypes = 250
	// MaxSchemaBytes bounds a type's JSON Schema and, apart, its example (as
	// sent): both ride on one DynamoDB item (400 KB), ingest reads and
	// compiles a schema once per Lambda instance and keeps it in memory, and
	// a schema is compiled and checked against the 2020-12 metaschema on every
	// write. 64 KiB is far more than a hand-written schema needs (Stripe's
	// largest event objects are a few KiB of schema).
	MaxSchemaBytes = 64 << 10
)

// EventType is one entry of an account's event catalog: a name producers
// send as "event", what it means, the JSON Schema its bodies must pass
// (optional) and an example body. A deprecated type still validates and
// delivers, but no endpoint may newly subscribe to it.
type EventType struct {
	AccountID   string `dynamodbav:"account_id"`
	Name        string `dynamodbav:"name"`
	Description string `dynamodbav:"description,omitempty"`
	Schema      string `dynamodbav:"schema,omitempty"`  // compact JSON; empty: any body
	Example     string `dynamodbav:"example,omitempty"` // compact JSON
	Deprecated  bool   `dynamodbav:"deprecated"`
	CreatedAt   int64  `dynamodbav:"created_at"`
	UpdatedAt   int64  `dynamodbav:"updated_at"`
	Rev         int64  `dynamodbav:"rev"` // raised by every update: the conditional write's guard
}
