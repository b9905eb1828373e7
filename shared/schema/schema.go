// Package schema is the one definition of the DynamoDB table and the SQS
// queues. The local emulators are set up from it (store.CreateTable,
// queue.CreateQueues) and the CDK stack builds the real resources from it, and
// a test in infra/ proves the two agree.
package schema

import "time"

// Attribute types, as DynamoDB names them.
const (
	String = "S"
	Number = "N"
)

// Key is one key attribute.
type Key struct {
	Name string
	Type string
}

// Index is a global secondary index.
type Index struct {
	Name       string
	PK, SK     Key
	Projection string   // "ALL", "KEYS_ONLY" or "INCLUDE"
	NonKey     []string // projected attributes when INCLUDE
	Purpose    string
}

// TableDef describes the single table.
type TableDef struct {
	PK, SK       Key
	Indexes      []Index
	TTLAttribute string
	// StreamView is the table's stream: the stats function (package
	// stats) folds delivery items' changes, which needs both images (an
	// attempt is counted when last_attempt_id changes, a delivery when its
	// status becomes final).
	StreamView string
}

// SweepShards spreads the sweeper's index over this many partition keys
// ("0".."15") so that no single key takes every pending delivery's writes.
const SweepShards = 16

// Index names.
const (
	IndexSweep          = "sweep"
	IndexEndpointLog    = "endpoint_log"
	IndexEndpointStatus = "endpoint_status"
	IndexPark           = "park"
	IndexAccountEvents  = "account_events"
)

// Table is the single table. Items (pk / sk):
//
//	ACCT#<account>  ACCT            account settings, endpoint count, ingest limit override, event catalog count and version
//	ACCT#<account>  EP#<endpoint>   endpoint: url, filter, secrets, health (failing_since, paused_until, disabled)
//	SLOT#<endpoint> SLOT            the endpoint's in-flight slot leases (s<k> = {u: until, c: claim}; TTL), in its own partition
//	ACCT#<account>  KEY#<key id>    API key reference (for listing and revoking; its ingest limit override)
//	ACCT#<account>  SIGNKEYS        the account's v1a ed25519 keys: kid, public key, sealed seed, retires_at (docs/signing.md)
//	KEY#<sha256>    KEY             API key: hash -> account
//	IDEM#<account>#<sha256(key)> IDEM   idempotency key -> event (24 h)
//	EVTS#<acct>#<day> <event id>   event: raw body, delivery ids, the endpoints it went to (replay's "never had a delivery"); keyed by the account's UTC day so that it is its own listing by time (EVT#<event> / EVT before: read too until it expires)
//	DLV#<delivery>  DLV             delivery state, and its first attempts' log entries (atts) while the item stays under 1 KB
//	DLV#<delivery>  ATT#<attempt>   one attempt that did not fit on the delivery's item
//	RATE#<account>  RATE            the account's rate limiter (GCRA)
//	MAIL#<sha256(notice key)> MAIL  a notice's email: claimed_at, sent_at (package notifymail: once per kind, endpoint, day; TTL 48 h)
//	ILIM#<key id>   ILIM            an API key's ingest limiter (GCRA: tat; TTL); ILIM#<session id>: a portal session's
//	PORTAL#<session> PORTAL         customer portal session: account, minting API key, SHA-256 of the token's secret, expiry
//	PORTALS#<account> PORTAL#<session>  the session's listing entry (no hash), for listing and revoking all (TTL)
//	TYPES#<account> TYPE#<name>     event catalog entry: description, JSON Schema, example, deprecated (its own partition: ingest reads ACCT#<account> whole)
//	SWEEP           MARKS           the sweeper's mark per shard of the sweep index: the due time read up to (m0..m15)
//	STATS#<account>[#<endpoint>] H#<yyyymmddhh>  hourly delivery counters (package stats; TTL 8 days)
//	KEYRING         DATAKEY#1       the envelope data key, encrypted by KMS (package envelope); endpoint secrets are sealed under it
var Table = TableDef{
	PK:           Key{"pk", String},
	SK:           Key{"sk", String},
	TTLAttribute: "ttl",
	StreamView:   "NEW_AND_OLD_IMAGES",
	Indexes: []Index{
		{
			Name: IndexSweep, PK: Key{"sweep_shard", String}, SK: Key{"due_at", Number},
			Projection: "KEYS_ONLY",
			Purpose:    "deliveries by when they are due (a dead-lettered one leaves; a delivered one stays, read once by the sweeper's moving window)",
		},
		{
			Name: IndexEndpointLog, PK: Key{"gsi1pk", String}, SK: Key{"gsi1sk", String},
			// Keys only: the entry is written once, at ingest, and no claim or
			// outcome rewrites it; a page of the log reads its deliveries with
			// one BatchGetItem.
			Projection: "KEYS_ONLY",
			Purpose:    "an endpoint's deliveries, newest first (gsi1pk = EP#<endpoint>, gsi1sk = delivery id)",
		},
		{
			Name: IndexEndpointStatus, PK: Key{"gsi2pk", String}, SK: Key{"gsi2sk", String},
			// Sparse and keys only: a delivery enters when it fails and leaves
			// when it is restarted; pending and delivered ones never enter
			// (their status filters read the log index).
			Projection: "KEYS_ONLY",
			Purpose:    "an endpoint's failed deliveries, newest first (gsi2pk = EP#<endpoint>#failed)",
		},
		{
			Name: IndexPark, PK: Key{"park_shard", String}, SK: Key{"park_until", Number},
			Projection: "KEYS_ONLY",
			Purpose:    "sparse: only deliveries parked for a wait longer than SQS's 15-minute delay, by when they are due (the scheduler's every-minute query)",
		},
		{
			Name: IndexAccountEvents, PK: Key{"gsi3pk", String}, SK: Key{"gsi3sk", String},
			// Legacy: events are now stored under this key themselves
			// (EVTS#<account>#<day> / event id), so no entry is written; the
			// index lists the events stored before, until they expire (the
			// retention after that deploy), and can then be dropped.
			Projection: "INCLUDE", NonKey: []string{"event_type", "endpoint_ids", "ttl"},
			Purpose: "legacy, sparse: events stored at EVT#<id> before they were keyed by their account's day " +
				"(gsi3pk = EVTS#<account>#<yyyy-mm-dd>, gsi3sk = event id), listed by AccountEvents with the new ones",
		},
	},
}

// Queues are the delivery queue and its dead-letter queue.
var Queues = QueueDefs{
	// The deliver function runs for at most FunctionTimeout; AWS asks for a
	// visibility timeout of at least six times that, plus the mapping's
	// batching window (the paced lane's).
	VisibilityTimeout: 6*FunctionTimeout + PacedWindow,
	// Only a safety net for poison messages: every wait (a retry, a
	// deferral) is a new delayed message or a park, never a receive of the
	// same one, so ordinary work never reaches this count; only a message
	// failing with system errors does.
	MaxReceiveCount:  25,
	Retention:        4 * 24 * time.Hour,
	DLQRetention:     14 * 24 * time.Hour,
	DeliveryQueueTag: "deliveries",
	SlowQueueTag:     "deliveries-slow",
	PacedQueueTag:    "deliveries-paced",
	DLQTag:           "dlq",
}

// The paced lane's mapping (lifecycle.LanePaced) takes batches of up to
// PacedBatch with no batching window: its messages are delayed to their
// slots' seconds (shared/pace) and leave as they arrive, so a window would
// only make them late for their seconds.
const (
	PacedWindow = 0 * time.Second
	PacedBatch  = 10
)

// DeliverMemoryMB is the deliver function's memory: the cheapest of 128,
// 256, 512 and 1,024 MB for a delivery (shared/cost DeliverSeconds,
// TestDeliverMemoryIsTheCheapest), as its time is mostly waiting.
const DeliverMemoryMB = 128

// The stats function's stream mapping: batches of up to StatsBatch records
// gathered for up to StatsWindow, so that a busy endpoint's hour takes one
// counter write per batch (a fraction of a write unit per delivery); a
// failed batch is retried, halved, at most StatsRetries times and then
// skipped, so a poison record cannot stall its shard.
const (
	StatsBatch   = 100
	StatsWindow  = 5 * time.Second
	StatsRetries = 2
)

// APITimeout is the api function's timeout: no request runs longer.
const APITimeout = 15 * time.Second

// FunctionTimeout is the deliver function's timeout: a 10 s attempt plus
// the DynamoDB and SQS calls around it, with room to spare.
const FunctionTimeout = 30 * time.Second

// QueueDefs holds the queue settings.
type QueueDefs struct {
	VisibilityTimeout time.Duration
	MaxReceiveCount   int
	Retention         time.Duration
	DLQRetention      time.Duration
	DeliveryQueueTag  string // queue name suffix
	SlowQueueTag      string // the slow lane's (lifecycle.Lane): the delivery queue's settings and DLQ
	PacedQueueTag     string // the paced lane's (lifecycle.LanePaced): the same
	DLQTag            string
}
