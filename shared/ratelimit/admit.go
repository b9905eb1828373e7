package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Limited is the answer to n events over the key's limit.
type Limited struct {
	RetryAfter time.Duration
}

func (e *Limited) Error() string {
	return fmt.Sprintf("over the API key's ingest limit; retry after %s", e.RetryAfter)
}

// ErrExceedsBurst: more events at once than the key's burst, which no wait allows.
var ErrExceedsBurst = errors.New("more events at once than the API key's burst allows")

// Take's memory: the table's item is the truth; each instance also
// remembers, per key, the last tat it saw and the tokens it took ahead
// (Lease). tat only grows, so that memory is a lower bound: when it already
// refuses, the table would too, and a flood past the limit is refused with
// no DynamoDB call until the key's next token is due. It also picks which
// of the two conditional writes to try first, so a call is usually one
// write, and a busy key's events are mostly admitted from the tokens taken
// ahead, with none.

// keyState is what an instance remembers of a key.
type keyState struct {
	tat        int64   // the last tat seen (unix µs)
	leases     []lease // tokens taken ahead, the oldest first
	window     int64   // the start of the current Window (unix µs)
	used, prev int     // events admitted in the current Window and the one before
}

// lease is tokens taken ahead by one write, usable until a Window after it.
type lease struct {
	left  int
	until int64 // unix µs
}

// held drops the leases that have run out at now and counts the tokens left.
func (st *keyState) held(now int64) int {
	for len(st.leases) > 0 && (st.leases[0].until <= now || st.leases[0].left == 0) {
		st.leases = st.leases[1:]
	}
	n := 0
	for _, l := range st.leases {
		n += l.left
	}
	return n
}

// use takes n of the held tokens, the oldest first; held(now) >= n.
func (st *keyState) use(n int) {
	for i := range st.leases {
		u := min(n, st.leases[i].left)
		st.leases[i].left -= u
		if n -= u; n == 0 {
			return
		}
	}
}

// Admitting sets the table's TTL attribute and the item key of an API
// key's ingest bucket, for Take and Refused; it returns lim.
func (lim *Limiter) Admitting(ttlAttribute string, key KeyFunc) *Limiter {
	lim.ttl, lim.ingestKey = ttlAttribute, key
	return lim
}

// Take takes n tokens from keyID's bucket under l. It returns nil when the
// events may go on, a *Limited when they are over the limit (nothing is
// taken), ErrExceedsBurst when n can never fit, or the table's error.
func (lim *Limiter) Take(ctx context.Context, keyID string, n int, l Limit) error {
	pk, sk := lim.ingestKey(keyID)
	return lim.takeAt(ctx, bucket{key: itemKey(pk, sk), attr: "tat", ttl: true}, keyID, n, l)
}

// TakeOn is Take for an API key of account: its bucket is an attribute of
// the account's booking item (KeyAttr), where ingest's bookings take the
// key's tokens in the booking's own write (ReserveTaking); a request that
// books no slot (a resend, a recover, an event no endpoint subscribes to)
// takes them here, from the same bucket.
func (lim *Limiter) TakeOn(ctx context.Context, account, keyID string, n int, l Limit) error {
	pk, sk := lim.key(account)
	return lim.takeAt(ctx, bucket{key: itemKey(pk, sk), attr: KeyAttr(keyID)}, keyID, n, l)
}

// KeyAttr is the attribute of an account's booking item that holds its API
// key keyID's tat (unix ms with µs decimals, as tat): about 40 bytes a key
// that has ingested, so an account's item stays under 1 KB, one write unit,
// up to some twenty keys in use.
func KeyAttr(keyID string) string { return "k_" + keyID }

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

// bucket is where a key's tat is kept: attr of the item key, with the
// table's TTL set on it when the item is the bucket's own (a portal
// session's; an account's booking item has no TTL).
type bucket struct {
	key  map[string]types.AttributeValue
	attr string
	ttl  bool
}

func (lim *Limiter) takeAt(ctx context.Context, b bucket, keyID string, n int, l Limit) error {
	if !l.Valid() {
		return fmt.Errorf("ratelimit: invalid limit %+v", l)
	}
	if n <= 0 {
		return nil
	}
	if Exceeds(n, l) {
		return ErrExceedsBurst
	}
	now := nowUs(lim.now())
	tat, want, ok := lim.fromHeld(keyID, n, l, now)
	if ok {
		return nil
	}
	if err := lim.refusal(tat, now, n, l); err != nil {
		return err
	}
	want = min(want, Fit(tat, now, l))
	for try := 0; try < 4; try++ {
		next, err := lim.admit(ctx, b, want, l, now, tat > now)
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			if err == nil {
				lim.took(keyID, n, want, next, now)
			}
			return err
		}
		// The condition failed: the item as it was says which case holds,
		// and how many tokens are left to take.
		if tat, err = tatAt(ccf.Item, b.attr); err != nil {
			return err
		}
		lim.took(keyID, 0, 0, tat, now)
		if d := Decide(tat, now, n, l); !d.Allowed {
			return &Limited{RetryAfter: d.RetryAfter}
		}
		want = min(want, Fit(tat, now, l))
	}
	return fmt.Errorf("ratelimit: no decision for key %s after repeated races", keyID)
}

// Refused is Take's answer from this instance's memory alone, with no
// DynamoDB call: a *Limited when the key is known to be over its limit,
// nil when only the table can tell. A caller checks it before starting
// other work, so a flood past the limit costs no call of any kind.
func (lim *Limiter) Refused(keyID string, n int, l Limit) error {
	if !l.Valid() || n <= 0 || Exceeds(n, l) {
		return nil // Take answers these
	}
	now := nowUs(lim.now())
	lim.mu.Lock()
	st := lim.keys[keyID]
	var tat int64
	held := 0
	if st != nil {
		tat, held = st.tat, st.held(now)
	}
	lim.mu.Unlock()
	if held >= n {
		return nil // taken already
	}
	return lim.refusal(tat, now, n, l)
}

func (lim *Limiter) refusal(seen, now int64, n int, l Limit) error {
	if d := Decide(seen, now, n, l); !d.Allowed {
		return &Limited{RetryAfter: d.RetryAfter} // the table can only say the same
	}
	return nil
}

// admit is Decide as a conditional write, for the state guessed: an idle
// bucket (tat <= now: full) restarts from now, a draining one (tat > now)
// grows tat by n intervals while it stays within the burst. It returns the
// new tat.
func (lim *Limiter) admit(ctx context.Context, b bucket, n int, l Limit, now int64, draining bool) (int64, error) {
	x := takeClause(b.attr, n, l, now, draining)
	expr := "SET" + x.set[1:]
	if b.ttl {
		// The item outlives the time its bucket takes to fill again.
		x.vals[":exp"] = numAV((now+int64(l.Burst)*l.interval())/1e6 + 3600)
		x.names["#ttl"] = lim.ttl
		expr += ", #ttl = :exp"
	}
	out, err := lim.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: lim.table, Key: b.key, UpdateExpression: aws.String(expr), ConditionExpression: aws.String(x.cond),
		ExpressionAttributeNames: x.names, ExpressionAttributeValues: x.vals,
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return 0, err
	}
	return tatAt(out.Attributes, b.attr)
}

// clause is a part of an update: ", a = b" items for its SET, a condition,
// and the names and values they use.
type clause struct {
	set, cond string
	names     map[string]string
	vals      map[string]types.AttributeValue
}

// takeClause is Decide for n tokens from the bucket attr as a part of an
// update, for the state guessed: an idle bucket (tat <= now: full) restarts
// from now, a draining one (tat > now) grows tat by n intervals while it
// stays within the burst.
func takeClause(attr string, n int, l Limit, now int64, draining bool) clause {
	step := int64(n) * l.interval()
	x := clause{set: ", #kt = :kn + :ks", cond: "attribute_not_exists(#kt) OR #kt <= :kn", names: map[string]string{"#kt": attr},
		vals: map[string]types.AttributeValue{":kn": msAV(now), ":ks": msAV(step)}}
	if draining {
		x.set, x.cond = ", #kt = #kt + :ks", "#kt > :kn AND #kt <= :kl"
		x.vals[":kl"] = msAV(now + int64(l.Burst)*l.interval() - step)
	}
	return x
}

// KeyTake is an API key's take of N tokens under Limit, for ReserveTaking
// to make in the account's booking write. ID "" is none.
type KeyTake struct {
	ID    string
	N     int
	Limit Limit
}

// keyTake is a KeyTake under way: the tokens asked for (N and a Lease) and
// the key's tat as last seen.
type keyTake struct {
	KeyTake
	want int
	tat  int64
}

// clause is kt's take as a part of the booking's update (none for nil).
func (kt *keyTake) clause(now int64) clause {
	if kt == nil {
		return clause{}
	}
	return takeClause(KeyAttr(kt.ID), kt.want, kt.Limit, now, kt.tat > now)
}

// raced reads the key's bucket from the item a failed booking write
// returned: a *Limited when the key is over its limit, else nil, with what
// to ask for next.
func (lim *Limiter) raced(kt *keyTake, item map[string]types.AttributeValue, now int64) error {
	if kt == nil {
		return nil
	}
	tat, err := tatAt(item, KeyAttr(kt.ID))
	if err != nil {
		return err
	}
	kt.tat = tat
	lim.took(kt.ID, 0, 0, tat, now)
	if d := Decide(tat, now, kt.N, kt.Limit); !d.Allowed {
		return &Limited{RetryAfter: d.RetryAfter}
	}
	kt.want = max(kt.N, min(kt.want, Fit(tat, now, kt.Limit)))
	return nil
}

// tookWith remembers kt's take, made by the booking write that returned attrs.
func (lim *Limiter) tookWith(kt *keyTake, attrs map[string]types.AttributeValue, now int64) error {
	if kt == nil {
		return nil
	}
	tat, err := tatAt(attrs, KeyAttr(kt.ID))
	if err == nil {
		lim.took(kt.ID, kt.N, kt.want, tat, now)
	}
	return err
}

// ReserveTaking is ReserveAhead that also takes key's tokens from its
// bucket on the account's booking item, in the booking's own conditional
// write: one write for both. When key is over its limit nothing is booked
// and the error is a *Limited (or ErrExceedsBurst). A key whose tokens this
// instance holds already (a Lease) books as ReserveAhead does, gathered
// with the account's other bookings; with n 0 the key's take is made alone
// (TakeOn).
func (lim *Limiter) ReserveTaking(ctx context.Context, account string, n int, perSecond float64, lead time.Duration, key KeyTake) (Reservation, error) {
	if key.ID == "" || key.N <= 0 {
		return lim.ReserveAhead(ctx, account, n, perSecond, lead)
	}
	if n <= 0 {
		return Reservation{First: lim.now()}, lim.TakeOn(ctx, account, key.ID, key.N, key.Limit)
	}
	if !key.Limit.Valid() {
		return Reservation{}, fmt.Errorf("ratelimit: invalid limit %+v", key.Limit)
	}
	if Exceeds(key.N, key.Limit) {
		return Reservation{}, ErrExceedsBurst
	}
	now := nowUs(lim.now())
	tat, want, ok := lim.fromHeld(key.ID, key.N, key.Limit, now)
	if ok {
		return lim.ReserveAhead(ctx, account, n, perSecond, lead)
	}
	if err := lim.refusal(tat, now, key.N, key.Limit); err != nil {
		return Reservation{}, err
	}
	kt := &keyTake{KeyTake: key, want: max(key.N, min(want, Fit(tat, now, key.Limit))), tat: tat}
	return lim.book(ctx, account, n, perSecond, lead, kt)
}

// fromHeld admits n events from the tokens this instance took ahead for
// keyID, if it holds that many. Otherwise it returns the last tat seen and
// how many tokens to ask the table for (n and a Lease).
func (lim *Limiter) fromHeld(keyID string, n int, l Limit, now int64) (tat int64, want int, ok bool) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	st := lim.memory(keyID, now)
	if st.held(now) >= n {
		st.use(n)
		st.used += n
		return st.tat, 0, true
	}
	return st.tat, n + Lease(n, st.used+st.prev, l), false
}

// took remembers a write's outcome for keyID: tat as the table has it, and,
// when the write took want tokens for n events, the ones left to hold.
func (lim *Limiter) took(keyID string, n, want int, tat, now int64) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	st := lim.memory(keyID, now)
	st.tat = max(st.tat, tat)
	if want > n {
		st.leases = append(st.leases, lease{left: want - n, until: now + Window.Microseconds()})
	}
	st.used += n
}

// memory is keyID's memory, its Window moved on to now. Call with mu held.
func (lim *Limiter) memory(keyID string, now int64) *keyState {
	st := lim.keys[keyID]
	if st == nil {
		if len(lim.keys) >= memoryMax {
			lim.keys = map[string]*keyState{}
		}
		st = &keyState{window: now}
		lim.keys[keyID] = st
	}
	if w := Window.Microseconds(); now >= st.window+w {
		st.prev = 0
		if now < st.window+2*w {
			st.prev = st.used
		}
		st.used, st.window = 0, now
	}
	return st
}

// tatAt reads a bucket's tat from attr of an item, in µs (none: a key
// never used). The item holds it in milliseconds, with the µs as decimals
// (msAV), as a booking's.
func tatAt(item map[string]types.AttributeValue, attr string) (int64, error) {
	av, ok := item[attr]
	if !ok {
		return 0, nil
	}
	return usOf(av)
}
