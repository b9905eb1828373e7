// Package ratelimit is the one limiter, GCRA kept in DynamoDB and shared
// by every Lambda instance, for every line: it books an account's
// deliveries (5 per second by default) and an endpoint's own rate ahead
// (Reserve), and admits or refuses an API key's ingest under its rate and
// burst (Take, admit.go). Each call names its line and its limit.
//
// It is GCRA with reservations: the account's item holds tat, the time at
// which its next free slot starts. Reserving n slots moves tat forward by n
// intervals in one conditional write and returns where the first slot
// starts; the caller then waits until its slot instead of trying again, so a
// burst of 500 turns into 500 scheduled sends, not 500 rejected ones retrying.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/pace"
)

// DynamoDB is the one call the limiter makes.
type DynamoDB interface {
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// KeyFunc returns an account's limiter item key.
type KeyFunc func(account string) (pk, sk string)

// Limiter reserves delivery slots.
type Limiter struct {
	db          DynamoDB
	table       *string
	key         KeyFunc
	defaultRate float64
	now         func() time.Time
	mu          sync.Mutex
	seen        map[string]seenItem // account -> its item as this instance last saw it (which write to try first)
	lines       map[lineKey]*line   // bookings waiting for a write of theirs in flight (ReserveAhead)

	// Admission (Take): the item key of an API key's bucket, the table's
	// TTL attribute, and what this instance remembers per key.
	ingestKey KeyFunc
	ttl       string
	keys      map[string]*keyState
}

// seenItem is a limiter item as this instance last saw it: its state, and
// the interval it stores (µs; 0 if not known).
type seenItem struct {
	State
	ivl int64
}

// memoryMax is how many accounts an instance remembers before its memory
// starts over (an account forgotten costs its next booking one more write).
const memoryMax = 10000

// New returns a limiter at defaultRate deliveries per second per account.
func New(db DynamoDB, table string, key KeyFunc, defaultRate float64) *Limiter {
	return &Limiter{db: db, table: aws.String(table), key: key, defaultRate: defaultRate, now: time.Now, seen: map[string]seenItem{},
		lines: map[lineKey]*line{}, keys: map[string]*keyState{}}
}

// WithClock makes the limiter read time from now (New's is time.Now): the
// clock its process's other parts read, so that a slot it books and the
// worker that waits for it agree on when it is.
func (l *Limiter) WithClock(now func() time.Time) *Limiter {
	l.now = now
	return l
}

// Reservation is n consecutive slots: slot i starts at First + i*Interval.
type Reservation struct {
	First    time.Time
	Interval time.Duration
}

// Slot returns the start of slot i.
func (r Reservation) Slot(i int) time.Time { return r.First.Add(time.Duration(i) * r.Interval) }

// Lead is a lead a caller may book a busy account's slots with
// (ReserveAhead), for a pipeline that must reach each slot before it: a
// little more than the latency from the booking to a worker holding the
// message. Ingest and resends book with none: a delivery leaves during its
// slot's second, whenever in it its message arrives (shared/pace). An idle
// account's first slot is now either way.
const Lead = time.Second

// State is a limiter item as a booking finds it: TAT, its next free slot,
// and Led, whether the slots booked up to it were booked with the lead (by
// a skip, or after one), so that they reach their workers in time.
type State struct {
	TAT time.Time
	Led bool
}

// Book is the booking rule in plain values, which the limiter's conditional
// writes carry out: n slots, ivl apart, for the limiter l, at now.
//   - Idle (TAT <= now): the first slot is now; a lone event waits for nothing.
//   - A fresh run of slots (booked from idle, not led) reaching more than a
//     tenth of the lead ahead, but less than the lead: the account has turned
//     busy, and those slots are too close for the pipeline, so the first is
//     now + lead (a skip; the slots in between stay unused) and the run is led.
//   - Otherwise the slots follow TAT: a run already led (its slots are far
//     enough ahead, and booking them so lets a busy spell drain back to idle
//     instead of skipping a lead again each time TAT comes within it), or
//     one nearer than a tenth of the lead (an account far under its rate:
//     those few slots, late, add at most a tenth of a second's worth to any
//     second, the receiver bound's 10 %).
//   - In the last pace.Cutoff of a second, slots that would fall in it
//     (TAT before the next second) start at the next second instead (the
//     rest of this one stays unused): a message sent now would reach its
//     worker too late in the second to leave in it.
//
// It returns the reservation and the limiter's new state.
func Book(l State, now time.Time, n int, ivl, lead time.Duration) (Reservation, State) {
	from, led := now, l.Led
	switch state(l.TAT.UnixMicro(), now.UnixMicro(), lead, l.Led) {
	case idle:
		led = false
	case near:
		from, led = now.Add(lead), true
	case tail:
		from, led = pace.Next(now), false
	}
	tat := advance(l.TAT, from, n, ivl)
	return Reservation{First: tat.Add(-time.Duration(n) * ivl), Interval: ivl}, State{TAT: tat, Led: led}
}

// limiter states, as a booking finds them (Book).
type bookState int

const (
	idle  bookState = iota // tat <= now (or no item): the first slot is now
	near                   // a fresh run, now + lead/10 <= tat < now + lead: the first slot is now + lead
	ahead                  // otherwise: the slots follow tat
	tail                   // now in its second's last pace.Cutoff, tat before the next second: the first slot is the next second's start
)

func state(tat, now int64, lead time.Duration, led bool) bookState {
	next := nextUs(now)
	switch us := lead.Microseconds(); {
	case now >= next-pace.Cutoff.Microseconds() && tat < next:
		return tail
	case tat <= now:
		return idle
	case !led && tat >= now+us/10 && tat < now+us:
		return near
	}
	return ahead
}

// Reserve books n slots for account, at once if the account is idle, else
// after the slots already booked. perSecond is the account's rate; 0 means
// the rate last stored for the account (set by ingest), or the default.
func (l *Limiter) Reserve(ctx context.Context, account string, n int, perSecond float64) (Reservation, error) {
	return l.ReserveAhead(ctx, account, n, perSecond, 0)
}

// ReserveAhead books n slots as Reserve does, but, when the account is
// already busy, no earlier than now + lead (Book; ingest, resends and
// workers book with none).
//
// Each state has its own conditional write. The one tried is the state of
// the item as this instance last saw it: after its own last booking, or as
// a write whose condition failed returned it (ReturnValuesOnConditionCheckFailure),
// so a booking costs one write, and one more for each booking of another
// instance that came in between. (Guessing the state from the last booking
// alone cost 1.9 writes per booking in the unpaced load run: eight producers
// at once left tat a millisecond ahead, and the guesses went idle, near,
// ahead in turn.)
//
// The bookings of one process for the same account, rate and lead that
// come while a write of theirs is in flight wait for it, and then book
// together in one write, whose slots they share in turn: the writes on the
// account's item (its partition's hottest) are one per write's time, not
// one per booking plus the races the bookings lost to each other. A worker's
// bookings (no rate) join only once the item's interval is known, since
// DynamoDB's updates cannot multiply the stored one: several slots at the
// stored rate are booked at the interval last seen, on the condition that
// the item still stores it.
func (l *Limiter) ReserveAhead(ctx context.Context, account string, n int, perSecond float64, lead time.Duration) (Reservation, error) {
	if n <= 0 {
		return Reservation{First: l.now()}, nil
	}
	if perSecond <= 0 && l.lastSeen(account).ivl == 0 {
		return l.book(ctx, account, n, perSecond, lead, nil)
	}
	k := lineKey{account, perSecond, lead}
	g, offset, writer := l.join(k, n)
	if writer {
		<-g.start // the write in flight before it has ended
		// The write is the others' too: its maker going away (a producer
		// that hung up) must not fail their bookings.
		g.res, g.err = l.book(context.WithoutCancel(ctx), account, g.n, perSecond, lead, nil)
		close(g.done)
		l.next(k)
	} else {
		<-g.done
	}
	if g.err != nil {
		return Reservation{}, g.err
	}
	return Reservation{First: g.res.Slot(offset), Interval: g.res.Interval}, nil
}

// lineKey is what bookings must share to book together.
type lineKey struct {
	account   string
	perSecond float64
	lead      time.Duration
}

// line is one lineKey's bookings: whether a write of theirs is in flight,
// and the group gathering for the next write.
type line struct {
	writing bool
	waiting *group
}

// group is the bookings made by one write: n slots in all, shared in the
// order they joined. start is closed when the write may be made (the one
// before it has ended), done when res and err are set.
type group struct {
	n           int
	start, done chan struct{}
	res         Reservation
	err         error
}

// join adds a booking of n slots to k's gathering group (a new one if none
// gathers), and says where its slots begin in the group's and whether its
// caller makes the group's write. A group whose write can begin at once
// (none in flight) stops gathering: it is the booking alone.
func (l *Limiter) join(k lineKey, n int) (g *group, offset int, writer bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lines[k]
	if ln == nil {
		ln = &line{}
		l.lines[k] = ln
	}
	if g = ln.waiting; g == nil {
		g, writer = &group{start: make(chan struct{}), done: make(chan struct{})}, true
		ln.waiting = g
	}
	offset, g.n = g.n, g.n+n
	if !ln.writing {
		ln.writing, ln.waiting = true, nil
		close(g.start)
	}
	return g, offset, writer
}

// next lets k's gathering group make its write, now that the one in flight
// has ended; with none gathering, the line is idle and forgotten.
func (l *Limiter) next(k lineKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lines[k]
	if g := ln.waiting; g != nil {
		ln.waiting = nil
		close(g.start)
		return
	}
	delete(l.lines, k)
}

// book makes the conditional writes of one booking of n slots, and of kt's
// take from its API key's bucket in the same write when kt is not nil.
func (l *Limiter) book(ctx context.Context, account string, n int, perSecond float64, lead time.Duration, kt *keyTake) (Reservation, error) {
	pk, sk := l.key(account)
	k := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
	item := l.lastSeen(account)
	for try := 0; try < 12; try++ {
		now := nowUs(l.now())
		p := pacing{ivl: intervalUs(perSecond)}
		if p.ivl == 0 && n > 1 && item.ivl != 0 {
			p = pacing{ivl: item.ivl, kept: true} // one slot needs no interval of its own: the stored one is added
		}
		if p.ivl == 0 && n != 1 {
			return Reservation{}, errSeveralNeedRate
		}
		var attrs map[string]types.AttributeValue
		var err error
		x := kt.clause(now)
		switch state(item.TAT.UnixMicro(), now, lead, item.Led) {
		case idle:
			attrs, err = l.start(ctx, k, n, p, now, x)
		case near:
			attrs, err = l.skip(ctx, k, n, p, now, lead, x)
		case tail:
			attrs, err = l.roll(ctx, k, n, p, now, x)
		default:
			attrs, err = l.append(ctx, k, n, p, now, lead, x)
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			if item, err = itemOf(ccf.Item); err != nil { // another booking came first: the item as it is now
				return Reservation{}, err
			}
			if err := l.raced(kt, ccf.Item, now); err != nil { // the key is over its limit: nothing booked
				return Reservation{}, err
			}
			continue
		}
		if err != nil {
			return Reservation{}, err
		}
		if item, err = itemOf(attrs); err != nil {
			return Reservation{}, err
		}
		l.see(account, item)
		if err := l.tookWith(kt, attrs, now); err != nil {
			return Reservation{}, err
		}
		return reservation(attrs, n)
	}
	return Reservation{}, fmt.Errorf("ratelimit: no reservation for %s after repeated races", account)
}

func (l *Limiter) lastSeen(account string) seenItem {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[account]
}

func (l *Limiter) see(account string, item seenItem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) >= memoryMax {
		l.seen = map[string]seenItem{}
	}
	l.seen[account] = item
}

// pacing is how a write spaces the slots it books: ivl µs apart, set as the
// account's interval; kept, ivl is the one the item stores, as last seen,
// and the write holds only while the item still stores it (a worker books
// at the stored rate, which ingest may have changed since); 0, one slot at
// the stored interval, whatever it is.
type pacing struct {
	ivl  int64
	kept bool
}

// spacing adds to a write what p says: the step of n slots (:step, or the
// stored ivl for one slot), the interval's SET, and cond with the interval's
// condition added.
func (p pacing) spacing(n int, cond string, vals map[string]types.AttributeValue) (step, set, withIvl string) {
	if p.ivl == 0 {
		return "ivl", "", "(" + cond + ") AND attribute_exists(ivl)"
	}
	vals[":step"], vals[":ivl"] = msAV(p.ivl*int64(n)), msAV(p.ivl)
	if p.kept {
		return ":step", "", "(" + cond + ") AND ivl = :ivl"
	}
	return ":step", ", ivl = :ivl", cond
}

// Interval is the spacing of an account's slots at perSecond: 1/perSecond
// to the microsecond (at least one). The item stores it, and tat, in
// milliseconds with up to three decimals (DynamoDB's numbers are decimal, so
// its updates add them exactly): whole milliseconds, as before, for every
// rate that divides a second into them (5/s: 200 ms), and no longer a
// rounded millisecond for the others (300/s was 3 ms, 333/s) nor at most
// 1,000 slots a second for an account (the 10x day's largest needs 1,900).
func Interval(perSecond float64) time.Duration {
	return time.Duration(intervalUs(perSecond)) * time.Microsecond
}

// intervalUs is Interval in µs, or 0 (perSecond 0: use the stored one).
func intervalUs(perSecond float64) int64 {
	if perSecond <= 0 {
		return 0
	}
	return int64(math.Max(1, math.Round(1e6/perSecond)))
}

// start: the limiter is idle (tat in the past): the first slot is now.
func (l *Limiter) start(ctx context.Context, k map[string]types.AttributeValue, n int, p pacing, now int64, x clause) (map[string]types.AttributeValue, error) {
	vals := map[string]types.AttributeValue{":now": msAV(now)}
	cond := "attribute_not_exists(tat) OR tat <= :now"
	if p.ivl == 0 {
		// A worker retrying does not know the account's rate: use the stored one.
		vals[":def"] = msAV(intervalUs(l.defaultRate))
		return l.update(ctx, k, "SET tat = :now + if_not_exists(ivl, :def), ivl = if_not_exists(ivl, :def)"+x.set+" REMOVE led", cond, vals, x)
	}
	step, set, cond := p.spacing(n, cond, vals)
	return l.update(ctx, k, "SET tat = :now + "+step+set+x.set+" REMOVE led", cond, vals, x)
}

var errSeveralNeedRate = errors.New("ratelimit: reserving several slots needs the account's rate")

// append: the limiter is busy and its slots follow tat: tat is at least the
// lead ahead, or nearer than a tenth of it, or its run is led (Book).
func (l *Limiter) append(ctx context.Context, k map[string]types.AttributeValue, n int, p pacing, now int64, lead time.Duration, x clause) (map[string]types.AttributeValue, error) {
	us := lead.Microseconds()
	vals := map[string]types.AttributeValue{":now": msAV(now), ":from": msAV(now + max(us, 1) - 1), ":tenth": msAV(now + us/10)}
	cond := "tat > :from OR (tat > :now AND (tat < :tenth OR attribute_exists(led)))"
	if next := nextUs(now); now >= next-pace.Cutoff.Microseconds() {
		vals[":next"] = msAV(next) // in a second's tail: only slots from the next second on
		cond = "(" + cond + ") AND tat >= :next"
	}
	return l.after(ctx, k, n, p, "tat", x.set, cond, vals, x)
}

// roll: the booking is in the last pace.Cutoff of a second and the slots
// booked so far end before the next second (idle, or a few ahead): the
// slots start at the next second (Book).
func (l *Limiter) roll(ctx context.Context, k map[string]types.AttributeValue, n int, p pacing, now int64, x clause) (map[string]types.AttributeValue, error) {
	vals := map[string]types.AttributeValue{":next": msAV(nextUs(now))}
	cond := "attribute_not_exists(tat) OR tat < :next"
	if p.ivl == 0 {
		vals[":def"] = msAV(intervalUs(l.defaultRate))
		return l.update(ctx, k, "SET tat = :next + if_not_exists(ivl, :def), ivl = if_not_exists(ivl, :def)"+x.set+" REMOVE led", cond, vals, x)
	}
	step, set, cond := p.spacing(n, cond, vals)
	return l.update(ctx, k, "SET tat = :next + "+step+set+x.set+" REMOVE led", cond, vals, x)
}

// nextUs is the start of the second after now's (unix µs).
func nextUs(now int64) int64 { return pace.Next(time.UnixMicro(now)).UnixMicro() }

// skip: a fresh run of slots has come within the lead (Book): the slots
// start at now + lead (the ones in between stay unused), and the run is led.
func (l *Limiter) skip(ctx context.Context, k map[string]types.AttributeValue, n int, p pacing, now int64, lead time.Duration, x clause) (map[string]types.AttributeValue, error) {
	us := lead.Microseconds()
	vals := map[string]types.AttributeValue{":tenth": msAV(now + us/10), ":from": msAV(now + us), ":led": &types.AttributeValueMemberBOOL{Value: true}}
	cond := "tat >= :tenth AND tat < :from AND attribute_not_exists(led)"
	return l.after(ctx, k, n, p, ":from", ", led = :led"+x.set, cond, vals, x)
}

// after books n slots starting at base (an operand of the update: "tat" or
// a value) when cond holds, spaced as p says; set adds to the update's SET
// clause.
func (l *Limiter) after(ctx context.Context, k map[string]types.AttributeValue, n int, p pacing, base, set, cond string, vals map[string]types.AttributeValue, x clause) (map[string]types.AttributeValue, error) {
	step, ivlSet, cond := p.spacing(n, cond, vals)
	return l.update(ctx, k, "SET tat = "+base+" + "+step+ivlSet+set, cond, vals, x)
}

// update makes one of the booking writes, with x's condition added (x's
// SET is in expr already); it returns the item as written, or a
// *types.ConditionalCheckFailedException carrying the item as it was.
func (l *Limiter) update(ctx context.Context, k map[string]types.AttributeValue, expr, cond string, vals map[string]types.AttributeValue, x clause) (map[string]types.AttributeValue, error) {
	var names map[string]string
	if x.cond != "" {
		cond = "(" + cond + ") AND (" + x.cond + ")"
		maps.Copy(vals, x.vals)
		names = x.names
	}
	out, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: l.table, Key: k, UpdateExpression: aws.String(expr), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

// itemOf reads a limiter item's state and interval (none: an account never
// booked, idle).
func itemOf(attrs map[string]types.AttributeValue) (seenItem, error) {
	if _, ok := attrs["tat"]; !ok {
		return seenItem{}, nil
	}
	tat, err := usOf(attrs["tat"])
	var ivl int64
	if av, ok := attrs["ivl"]; ok && err == nil {
		ivl, err = usOf(av)
	}
	_, led := attrs["led"]
	return seenItem{State: State{TAT: time.UnixMicro(tat), Led: led}, ivl: ivl}, err
}

// reservation reads the n slots just booked back from the limiter's new tat.
func reservation(attrs map[string]types.AttributeValue, n int) (Reservation, error) {
	tat, err1 := usOf(attrs["tat"])
	ivl, err2 := usOf(attrs["ivl"])
	if err := errors.Join(err1, err2); err != nil {
		return Reservation{}, err
	}
	return Reservation{First: time.UnixMicro(tat - ivl*int64(n)), Interval: time.Duration(ivl) * time.Microsecond}, nil
}

// nowUs is now in µs, whole milliseconds: with an interval of whole
// milliseconds (every rate that divides a second into them, the defaults'),
// tat stays whole milliseconds, as a queue message carries a slot
// (queue.Message.SlotAt) and as code from before finer intervals reads it
// (an instance of it still running as a deploy rolls out).
func nowUs(t time.Time) int64 { return t.UnixMilli() * 1000 }

// msAV is us µs as a DynamoDB number of milliseconds, with the µs as up to
// three decimals.
func msAV(us int64) types.AttributeValue {
	v := strconv.FormatInt(us/1000, 10)
	if f := us % 1000; f != 0 {
		v += strings.TrimRight(fmt.Sprintf(".%03d", f), "0")
	}
	return &types.AttributeValueMemberN{Value: v}
}

// usOf reads a DynamoDB number of milliseconds (msAV's, or a whole number
// as items stored before intervals were finer) as µs.
func usOf(av types.AttributeValue) (int64, error) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, errors.New("ratelimit: limiter item lacks a number")
	}
	ms, ok := new(big.Rat).SetString(n.Value)
	if !ok {
		return 0, fmt.Errorf("ratelimit: limiter item's number %q", n.Value)
	}
	us := new(big.Rat).Mul(ms, big.NewRat(1000, 1))
	if !us.IsInt() || !us.Num().IsInt64() {
		return 0, fmt.Errorf("ratelimit: limiter item's number %q is not whole microseconds", n.Value)
	}
	return us.Num().Int64(), nil
}

func numAV(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// Refund gives back the slot r (one slot: r.First, booked r.Interval
// apart from the next) that was booked and will not be used (the endpoint
// was at its in-flight cap, or the claim was lost), when it is still the
// last slot booked and ahead of now: tat moves back to it, so the next
// booking gets it. A slot from the middle of a booked run is not given
// back: moving tat back past slots already handed out would put two
// attempts in one slot at the end of the run and break the receiver's
// per-second bound (TestBurstDrainsAtTheAccountRate would see 29 in a second at
// 20/s), so such a slot is spent, as every unused slot was before. Without
// refunds, a lone deferred delivery cost its account two slots for one POST.
func (l *Limiter) Refund(ctx context.Context, account string, r Reservation) error {
	if r.Interval <= 0 || r.First.IsZero() || !r.First.After(l.now()) {
		return nil
	}
	pk, sk := l.key(account)
	k := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
	at := r.First.UnixMicro()
	attrs, err := l.update(ctx, k, "SET tat = :at", "tat > :at AND tat <= :end",
		map[string]types.AttributeValue{":at": msAV(at), ":end": msAV(at + r.Interval.Microseconds())}, clause{})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // another slot was booked after it: spent
	}
	if err != nil {
		return err
	}
	if item, err := itemOf(attrs); err == nil {
		l.see(account, item)
	}
	return nil
}
