// Package ingest is where an event is accepted: it validates the producer's
// body, fans it out to the account's subscribed endpoints, writes the event
// and its deliveries durably, and only then queues them, each at the time of
// its rate-limit slot.
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what ingest needs of the table.
type Store interface {
	AccountWithEndpoints(ctx context.Context, accountID string) (domain.Account, []domain.Endpoint, error)
	CreateEvent(context.Context, store.NewEvent) (string, error)
	PriorEvent(ctx context.Context, accountID, idempotencyKey string, body []byte) (string, error)
	GetEvent(ctx context.Context, accountID, id string) (domain.Event, error)
	GetDeliveries(ctx context.Context, ids []string) ([]domain.Delivery, error)
	GetEventType(ctx context.Context, accountID, name string) (domain.EventType, error)
	Sequence(ctx context.Context, accountID, key string, deliveries map[string]string, expiresAt int64) (store.Sequenced, error)
}

// Queue sends the new deliveries' messages.
type Queue interface {
	SendAll(context.Context, []queue.Outgoing) ([]int, error)
}

// Limiter reserves rate-limit slots for the deliveries (with no lead: a
// slot's message is delayed to its second, shared/pace), and takes
// the request's API key tokens in the same write (ratelimit.Limiter's
// ReserveTaking; key's ID "" takes none).
type Limiter interface {
	ReserveTaking(ctx context.Context, account string, n int, perSecond float64, lead time.Duration, key ratelimit.KeyTake) (ratelimit.Reservation, error)
}

// Service accepts events.
type Service struct {
	Store       Store
	Queue       Queue
	Limiter     Limiter
	DefaultRate float64 // deliveries per second per account unless the account says otherwise
	Lanes       bool    // a slow lane is deployed: a failing endpoint's deliveries start on it (lifecycle.Lane)
	Paced       bool    // a paced lane is deployed: deliveries whose slots are booked ahead start on it (lifecycle.LanePaced)
	Log         *slog.Logger
	Metrics     *obs.Metrics
	Now         func() time.Time

	schemas schemaCache // the account catalogs' compiled schemas (schemas.go)
}

// Validation errors; the API turns them into 4xx answers.
var (
	ErrTooLarge          = errors.New("the body is larger than 256 KiB")
	ErrInvalidJSON       = errors.New("the body is not a JSON object")
	ErrNoEventType       = errors.New(`the body has no string field "event"`)
	ErrDuplicateEvent    = errors.New(`the body has "event" more than once: receivers would disagree on which one counts`)
	ErrBadEventType      = errors.New(`"event" must be 1-200 characters of letters, digits and . _ : / -`)
	ErrBadIdempotencyKey = errors.New("Idempotency-Key must be 1-255 printable ASCII characters")
	ErrBadOrderingKey    = errors.New("Ordering-Key must be 1-128 printable ASCII characters")
	ErrSystemEventType   = errors.New(`"event" is one this service sends itself (endpoint.failing, endpoint.disabling, endpoint.disabled, endpoint.recovered): producers may not send it`)
)

var eventTypeRE = regexp.MustCompile(`^` + domain.EventTypePattern + `$`)

// Result is the accepted event and its deliveries.
type Result struct {
	Event      domain.Event
	Deliveries []domain.Delivery
	Replayed   bool // an earlier request with the same Idempotency-Key
}

// Validate checks a body and returns its event type. Nothing is stored.
func Validate(body []byte) (string, error) {
	if len(body) > domain.MaxBodyBytes {
		return "", ErrTooLarge
	}
	if !utf8.Valid(body) {
		return "", ErrInvalidJSON
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return "", ErrInvalidJSON
	}
	raw, ok := fields["event"]
	if !ok {
		return "", ErrNoEventType
	}
	var eventType string
	if err := json.Unmarshal(raw, &eventType); err != nil {
		return "", ErrNoEventType
	}
	if !eventTypeRE.MatchString(eventType) {
		return "", ErrBadEventType
	}
	if topLevelCount(body, "event") > 1 {
		return "", ErrDuplicateEvent
	}
	return eventType, nil
}

// topLevelCount counts a name among a JSON object's top-level keys (a map
// decode keeps only the last of duplicates). body is known to be an object.
func topLevelCount(body []byte, name string) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // {
		return 0
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return n
		}
		if k == name {
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n
		}
	}
	return n
}

func validIdempotencyKey(k string) bool { return printable(k, domain.MaxIdempotencyKeySize) }

// printable: 1 to max bytes of printable ASCII.
func printable(k string, max int) bool {
	if len(k) == 0 || len(k) > max {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Ingest accepts body for account. The body is stored exactly as given.
func (s *Service) Ingest(ctx context.Context, accountID string, body []byte, idempotencyKey string) (Result, error) {
	return s.IngestKeyed(ctx, accountID, body, idempotencyKey, "")
}

// IngestKeyed is Ingest of an event with an ordering key ("": none).
func (s *Service) IngestKeyed(ctx context.Context, accountID string, body []byte, idempotencyKey, orderingKey string) (Result, error) {
	p, err := check(body, idempotencyKey)
	if err == nil && orderingKey != "" && !printable(orderingKey, domain.MaxOrderingKeySize) {
		err = ErrBadOrderingKey
	}
	if err != nil {
		return Result{}, err
	}
	if idempotencyKey != "" {
		// A replay answers the first event and reserves no rate slots.
		if res, stored, err := s.prior(ctx, accountID, idempotencyKey, body); stored {
			return res, err
		}
	}
	acct, endpoints, err := s.Store.AccountWithEndpoints(ctx, accountID)
	if err != nil {
		return Result{}, err
	}
	if err := s.checkSchema(ctx, acct, p, nil); err != nil {
		return Result{}, err
	}
	now := s.Now()
	ne := fanOut(accountID, endpoints, p, now)
	slots, ivl, err := s.reserve(ctx, acct, len(ne.Deliveries), now) // and the request's gate (gate.go)
	if err != nil {
		return Result{}, err
	}
	ne.DueAt = dueAt(slots, now)
	if orderingKey != "" {
		if err := s.sequence(ctx, &ne, endpoints, orderingKey); err != nil {
			return Result{}, err
		}
	}
	firstID, err := s.Store.CreateEvent(ctx, ne)
	if errors.Is(err, store.ErrDuplicate) {
		return s.replay(ctx, accountID, firstID)
	}
	if err != nil {
		return Result{}, err
	}
	s.enqueue(ctx, endpoints, ne.Deliveries, slots, ivl, now, ne.Event)
	// The API's request line names the event (httpapi): one info line per
	// accepted event is enough, so this one is for debugging.
	s.accepted(ctx, ne, slog.LevelDebug)
	return Result{Event: ne.Event, Deliveries: ne.Deliveries}, nil
}

// sequence gives a keyed event its number in its key's sequence, and each
// delivery to an ordered endpoint its predecessor (store.Sequence). A
// number taken by an event that is then not written is a gap: its
// successor's wait for it ends (lifecycle.Hold).
func (s *Service) sequence(ctx context.Context, ne *store.NewEvent, endpoints []domain.Endpoint, orderingKey string) error {
	ordered := map[string]bool{}
	for _, ep := range endpoints {
		ordered[ep.ID] = ep.Settings.Ordered
	}
	mine := map[string]string{}
	for _, d := range ne.Deliveries {
		if ordered[d.EndpointID] {
			mine[d.EndpointID] = d.ID
		}
	}
	sq, err := s.Store.Sequence(ctx, ne.Event.AccountID, orderingKey, mine, ne.Event.ExpiresAt)
	if err != nil {
		return err
	}
	ne.Event.OrderingKey, ne.Event.Seq = orderingKey, sq.Seq
	for i, d := range ne.Deliveries {
		ne.Deliveries[i].PrevDelivery = sq.Prev[d.EndpointID]
	}
	return nil
}

// checked is a body that passed validation, with its event type.
type checked struct {
	body           []byte
	eventType      string
	idempotencyKey string
}

func check(body []byte, idempotencyKey string) (checked, error) {
	eventType, err := Validate(body)
	if err != nil {
		return checked{}, err
	}
	if domain.IsSystemEvent(eventType) {
		return checked{}, ErrSystemEventType
	}
	if idempotencyKey != "" && !validIdempotencyKey(idempotencyKey) {
		return checked{}, ErrBadIdempotencyKey
	}
	return checked{body: body, eventType: eventType, idempotencyKey: idempotencyKey}, nil
}

// newDelivery is a new delivery of an event (its id, type and expiry) to an
// endpoint of the account, made now (domain.NewDelivery).
func newDelivery(accountID, endpointID, eventID, eventType string, expiresAt int64, now time.Time) domain.Delivery {
	return domain.NewDelivery(domain.NewID("dlv"), accountID, endpointID, eventID, eventType, domain.Millis(now), expiresAt)
}

// fanOut makes the event and one delivery per enabled endpoint that
// subscribes to its type and whose content filter takes its body.
func fanOut(accountID string, endpoints []domain.Endpoint, p checked, now time.Time) store.NewEvent {
	ev := domain.Event{
		ID: domain.NewID("evt"), AccountID: accountID, Type: p.eventType, Body: p.body, IdempotencyKey: p.idempotencyKey,
		ReceivedAt: domain.Millis(now), ExpiresAt: now.Add(domain.DefaultRetention).Unix(), DeliveryIDs: []string{},
	}
	var deliveries []domain.Delivery
	body := bodyOf(p.body)
	for _, ep := range endpoints {
		if ep.Disabled || ep.DestinationOf() == domain.DestinationPolling || !ep.Subscribes(p.eventType) || !body.passes(ep) {
			continue
		}
		d := newDelivery(accountID, ep.ID, ev.ID, p.eventType, ev.ExpiresAt, now)
		deliveries = append(deliveries, d)
		ev.DeliveryIDs = append(ev.DeliveryIDs, d.ID)
		ev.EndpointIDs = append(ev.EndpointIDs, ep.ID)
	}
	return store.NewEvent{Event: ev, Deliveries: deliveries}
}

// dueAt is when the sweeper expects each delivery to move: at its slot, or
// now when it has none (the limiter could not be reached).
func dueAt(slots []time.Time, now time.Time) []int64 {
	out := make([]int64, len(slots))
	for i, t := range slots {
		if t.IsZero() {
			t = now
		}
		out[i] = domain.Millis(t)
	}
	return out
}

// accepted counts and logs a stored event, in an EMF line of its own.
func (s *Service) accepted(ctx context.Context, ne store.NewEvent, level slog.Level) {
	m := s.Metrics.Batch()
	s.counted(ctx, ne, m, level)
	m.Flush()
}

// counted counts a stored event in m and logs it.
func (s *Service) counted(ctx context.Context, ne store.NewEvent, m *obs.Batch, level slog.Level) {
	m.Count(obs.MetricEventsIngested, 1)
	m.Count(obs.MetricDeliveriesCreated, float64(len(ne.Deliveries)))
	s.Log.Log(ctx, level, "event accepted", "event_id", ne.Event.ID, "account_id", ne.Event.AccountID, "event_type", ne.Event.Type,
		"deliveries", len(ne.Deliveries), "bytes", len(ne.Event.Body))
}

// reserve books one rate-limit slot per delivery, and takes ctx's gate
// (the request's API key limit) in the same write; with no delivery, the
// gate's take alone. A key over its limit is the gate's answer, and nothing
// is booked. If the limiter cannot be reached, the slots stay zero: the
// messages carry none, and the worker books each one before its attempt
// (and, if the limiter still fails there, puts the message back). A slot
// stamped "now" instead would let a whole burst out at once.
func (s *Service) reserve(ctx context.Context, acct domain.Account, n int, now time.Time) ([]time.Time, time.Duration, error) {
	slots := make([]time.Time, n)
	gate := gateOf(ctx)
	var take ratelimit.KeyTake
	if gate != nil {
		take = gate.Take
	}
	if n == 0 && take.ID == "" {
		return slots, 0, nil
	}
	rate := acct.RatePerSecond
	if rate <= 0 {
		rate = s.DefaultRate
	}
	res, err := s.Limiter.ReserveTaking(ctx, acct.ID, n, rate, 0, take)
	if gate != nil {
		if refused := gate.Answer(ctx, err); refused != nil {
			return nil, 0, refused
		}
	}
	if n == 0 {
		return slots, 0, nil
	}
	if err != nil {
		s.Log.Warn("rate limiter unavailable; the worker will pace these deliveries", "account_id", acct.ID, "error", err)
		return slots, 0, nil
	}
	for i := range slots {
		slots[i] = res.Slot(i)
	}
	return slots, res.Interval, nil
}

// enqueue sends one message per delivery to one of eps, delayed to its
// slot's second (pace.Delay), on its endpoint's lane (or the paced lane,
// for a delayed one: lifecycle.PacedLane).
// A failed send loses nothing: the delivery is in the table and the sweeper
// finds it. The deliveries are stored, so a producer that hangs up now
// (its request's context ended) does not stop the send: the sweeper would
// find them only minutes later.
// Each message carries its event's body when it is small (events: the
// events written, whose deliveries these are; none for replays, whose bodies
// the worker reads).
func (s *Service) enqueue(ctx context.Context, eps []domain.Endpoint, deliveries []domain.Delivery, slots []time.Time, ivl time.Duration, now time.Time, events ...domain.Event) {
	if len(deliveries) == 0 {
		return
	}
	byID := make(map[string]*domain.Event, len(events))
	for i := range events {
		byID[events[i].ID] = &events[i]
	}
	slow := map[string]bool{}
	for _, ep := range eps {
		slow[ep.ID] = s.Lanes && lifecycle.LaneOf(ep, now) == lifecycle.LaneSlow
	}
	out := make([]queue.Outgoing, len(deliveries))
	sent := s.Now() // the delays count from the send, not from the request's start
	for i, d := range deliveries {
		m := queue.For(d)
		if ev := byID[d.EventID]; ev != nil && ev.OrderingKey == "" { // a keyed event's worker reads its number from the table
			m = m.Carrying(ev.Type, ev.Body)
			if len(m.Body) > 0 {
				m.First = &queue.First{CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt}
			}
		}
		lane := lifecycle.LaneFast
		if slow[d.EndpointID] {
			lane = lifecycle.LaneSlow
		}
		var delay time.Duration
		if !slots[i].IsZero() {
			m.SlotAt, m.SlotIvl = domain.Millis(slots[i]), ivl.Milliseconds()
			delay = pace.Delay(slots[i], sent)
			lane = lifecycle.PacedLane(lane, s.Paced, delay)
		}
		m.Lane = queue.LaneName(lane)
		out[i] = queue.Outgoing{Message: m, Delay: delay}
	}
	failed, err := s.Queue.SendAll(context.WithoutCancel(ctx), out)
	if err != nil {
		s.Log.Error("queueing deliveries failed; the sweeper will send them", "count", len(failed), "error", err)
		b := s.Metrics.Batch()
		b.Count(obs.MetricEnqueueFailures, float64(len(failed)))
		b.Flush()
	}
}

// replay answers a repeated Idempotency-Key with the first event.
// prior looks an idempotency key up before anything is reserved: a key
// already stored (stored true) answers its first event, or the store's error
// (store.ErrIdempotencyMismatch for another body, or the table unavailable).
// A key not seen yet is stored false.
func (s *Service) prior(ctx context.Context, accountID, key string, body []byte) (res Result, stored bool, err error) {
	first, err := s.Store.PriorEvent(ctx, accountID, key, body)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Result{}, false, nil
	case errors.Is(err, store.ErrDuplicate):
		res, err = s.replay(ctx, accountID, first)
	}
	return res, true, err
}

func (s *Service) replay(ctx context.Context, accountID, eventID string) (Result, error) {
	ev, err := s.Store.GetEvent(ctx, accountID, eventID)
	if err != nil {
		return Result{}, err
	}
	ds, err := s.Store.GetDeliveries(ctx, ev.DeliveryIDs)
	if err != nil {
		return Result{}, err
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].ID < ds[j].ID })
	return Result{Event: ev, Deliveries: ds, Replayed: true}, nil
}
