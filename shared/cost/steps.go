package cost

// The capacity units of one delivery, step by step, with the item (and so
// the partition) each step writes or reads: docs/cost.md's "Capacity units"
// table as constants. They add up to the counted figures above
// (TestStepUnitsAddUpToTheCounted), which TestAWSCallsPerDelivery holds to
// the emulator's consumed capacity, so a step that changes its units fails
// one test or the other. localstack/sim bills from these and nothing else.
//
// Every item below is under 1 KB written and 4 KB read, so one unit per
// item (half of one for a read eventually consistent); a write that adds
// or removes an index entry also writes the index (one unit), and one that
// moves an entry (a new sort key) writes it twice.
const (
	// Ingest, per request: the API key's ingest limiter, none of its own:
	// its bucket is an attribute of RATE#<account>, and the booking's write
	// takes its tokens (ratelimit.ReserveTaking).
	IngestKeyLimitWrite = 0
	// Ingest, per event: the account's delivery rate limiter, RATE#<account>
	// (one booking for the event's deliveries; more under contention).
	IngestRateBookingWrite = 1
	// Ingest, per event: the event item, EVTS#<account>#<day> / its id (its
	// conditional put is the commit point).
	IngestEventWrite = 1
	// Ingest, per event: none for its listing by time: the event item is
	// keyed by EVTS#<account>#<day> and its id, the listing's own key.
	IngestAccountEventsWrite = 0
	// Ingest, per delivery: the delivery item, DLV#<delivery>.
	IngestDeliveryWrite = 1
	// Ingest, per delivery: its endpoint_log index entry, EP#<endpoint>
	// (keys only, never rewritten).
	IngestLogIndexWrite = 1
	// Ingest, per delivery: its sweep index entry, one of the 16 shards.
	IngestSweepIndexWrite = 1

	// Deliver, per attempt with the per-endpoint cap: take an in-flight
	// slot and free it, SLOT#<endpoint>.
	SlotTakeWrite, SlotReleaseWrite = 1, 1
	// Deliver, per attempt: the claim, DLV#<delivery> (no index entry
	// changes).
	ClaimWrite = 1
	// Deliver, per attempt: the attempt's log entry, written on the
	// delivery's item by the outcome's own write while the item stays
	// within one write unit with it (store.RecordAttempt: a delivery's
	// first two attempts, as a rule), so none of its own.
	AttemptWrite = 0
	// An attempt that does not fit there (a long response kept, a long
	// log already on the item) has its own item, DLV#<delivery>
	// ATT#<attempt>.
	AttemptOwnWrite = 1
	// How many attempts with short answers fit on a delivery's item
	// (store's TestAFirstTrysAttemptIsLoggedByItsOutcomeWrite holds it):
	// the later ones of a long series have their own items.
	AttemptsLoggedOnDelivery = 2
	// Deliver, per attempt: the outcome on the delivery item.
	OutcomeWrite = 1
	// The outcome of a delivered delivery leaves its sweep index entry
	// where it is: the sweeper reads each entry once, in a moving window of
	// due times, and skips a final delivery (SweepDeliveryRead).
	DeliveredSweepWrite = 0
	// Marking a failed delivery's DLQ message sent takes its sweep index
	// entry out (FailWrites).
	SweepRemoveWrite = 1
	// The sweeper's read of each delivery once, when its window passes the
	// delivery's due time: eventually consistent, half a unit (the page's
	// BatchGetItem), and its share of the keys-only index query (~60 B of
	// a 4 KB unit, left out). Not in the api and deliver functions' counts;
	// TestSweeperCostPerRun measures it.
	SweepDeliveryRead = 0.5
	// The outcome of a failed attempt whose retry is due more than half the
	// sweeper's grace after the delivery's due time moves its sweep index
	// entry to it (a move: two units); the schedule's first retries (1 s,
	// 16 s, 81 s) keep it (lifecycle.KeepsDue), RetrySweepWrite.
	SweepMoveWrite  = 2
	RetrySweepWrite = 0
	// The endpoint's health (failing_since, the breaker's count and state,
	// paused_until), ACCT#<account> EP#<endpoint>, written only when it
	// changes: turning failing, each transport failure the breaker counts,
	// turning healthy again. Not for a blip (lifecycle.Blip: a delivery's
	// first attempt answered with an HTTP error on a healthy endpoint).
	EndpointHealthWrite = 1
	// A retry books its own slot on RATE#<account>.
	RetryRateBookingWrite = 1
	// The half-open breaker's probe, a conditional write on the endpoint
	// item (TakeProbe).
	ProbeWrite = 1

	// Ingest, per event: the account and its endpoints, one strongly
	// consistent query of ACCT#<account> (one unit per 4 KB: an account
	// with 16 endpoints reads 2).
	IngestAccountRead = 1
	// Deliver, per message loaded: the endpoint and the endpoint's slot
	// item in one strong BatchGetItem (ACCT#, SLOT#, one unit each).
	LoadReads = 2
	// Ingest's own first message carries its delivery and its event's
	// body, so its load reads only those two items, and eventually
	// consistent: half a unit each (lifecycle.Step; anything but the claim
	// it would decide from them is read again strongly first: an endpoint
	// paused, failing, held or disabled, a few messages a day).
	FirstLoadReads = 1
	// The delivery's item (DLV#) joins the strong read for every message
	// but ingest's own first one, which carries the delivery as ingest
	// wrote it (queue.Message.First; the claim's condition holds it to
	// that).
	LoadDeliveryRead = 1
	// The event's item (EVT#) joins that read only for a message that does
	// not carry the event's body (queue.Message.Body: ingest's messages and
	// their retries carry bodies up to 4 KiB; the sweeper's, the
	// scheduler's, redrives' and resends' do not).
	LoadEventRead = 1
	// Of them, the endpoint item's, in ACCT#<account>: strong, and in the
	// eventual read of ingest's first message.
	LoadEndpointRead, FirstLoadEndpointRead = 1, 0.5
	// Deliver, per claim with the cap off: the endpoint again, strongly
	// consistent, alongside the claim (ACCT#<account>). With
	// the cap on, the slot's take is conditioned on the endpoint's route
	// as loaded instead, and nothing is read again.
	ClaimEndpointReread = 1
)

// Waits longer than SQS's 15-minute delay, and deferrals that move a
// delivery's due time, by the same rule (an item 1, an index entry 1, a
// move 2). Derived from the store's writes (shared/store park.go,
// sweep.go), not measured by TestAWSCallsPerDelivery.
const (
	// ParkDelivery: the delivery, its park index entry added, its sweep
	// entry moved to park_until.
	ParkWrites = 1 + 1 + 2
	// Unpark: the delivery, its park index entry removed.
	UnparkWrites = 1 + 1
	// PushDue: the delivery, its sweep entry moved.
	MoveDueWrites = 1 + 2
	// A delivery failed for good, beside its outcome: its sweep entry out,
	// its endpoint_status index entry in.
	FailWrites = SweepRemoveWrite + 1
	// The scheduler's query of the park index, per delivery unparked:
	// keys-only entries (~50 B), eventually consistent, a page of 4 KB.
	ParkQueryReads = 0.02
)

// SlotWrites is what the per-endpoint in-flight cap adds to an attempt.
const SlotWrites = SlotTakeWrite + SlotReleaseWrite

// Per event, per delivery and per attempt, as the steps add up (cap on).
const (
	// Ingest's writes shared by an event's deliveries.
	IngestEventWrites = IngestKeyLimitWrite + IngestRateBookingWrite + IngestEventWrite + IngestAccountEventsWrite
	// Ingest's writes for each delivery.
	IngestDeliveryWrites = IngestDeliveryWrite + IngestLogIndexWrite + IngestSweepIndexWrite
	// An attempt's writes, whatever its answer, before the sweep entry's
	// move.
	AttemptWrites = SlotWrites + ClaimWrite + AttemptWrite + OutcomeWrite
	// A first attempt's reads, on ingest's message: the eventual load (the
	// re-read before the claim is the cap off's).
	AttemptReads = FirstLoadReads
	// A retry's: the load with the delivery's item.
	RetryAttemptReads = LoadReads + LoadDeliveryRead
)

// The counted figures of a retry (a 500 then a 200, TestAWSCallsPerDelivery:
// its own rate-limit slot, claim, outcome with the attempt and slot, its
// sweep entry kept; the 500 a blip, so no health write).
const RetryWriteUnits, RetryReadUnits = 5, 3
