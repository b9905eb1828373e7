package ratelimit_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

// A slow rate, so no token refills while a test runs however loaded the machine.
var slow = ratelimit.Limit{Rate: 0.01, Burst: 5}

// Several instances sharing the table hand out exactly the burst between
// them, and a refusal takes nothing from the bucket.
func TestInstancesShareOneBucketPerKey(t *testing.T) {
	lims := instances(testenv.New(t), 4)
	allowed, limited := takeAtOnce(t, lims, "key_flood", 40, slow)
	if allowed != 5 || limited != 35 {
		t.Fatalf("allowed %d, limited %d; want the burst of 5 and 35 refused", allowed, limited)
	}
	// Another key has its own bucket.
	if err := lims[0].Take(ctx, "key_quiet", 5, slow); err != nil {
		t.Fatalf("another key's burst: %v", err)
	}
}

// instances is n limiters sharing env's table, as n Lambda instances would.
func instances(env *testenv.Env, n int) []*ratelimit.Limiter {
	var lims []*ratelimit.Limiter
	for i := 0; i < n; i++ {
		lims = append(lims, ratelimit.New(env.DB, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey))
	}
	return lims
}

// takeAtOnce makes takes concurrent takes of one token of key under l,
// spread over lims, and counts the answers: any but allowed, or refused
// with a Retry-After, fails the test.
func takeAtOnce(t *testing.T, lims []*ratelimit.Limiter, key string, takes int, l ratelimit.Limit) (allowed, limited int64) {
	var a, r atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < takes; i++ {
		wg.Add(1)
		go func(lim *ratelimit.Limiter) {
			defer wg.Done()
			err := lim.Take(ctx, key, 1, l)
			var over *ratelimit.Limited
			switch {
			case err == nil:
				a.Add(1)
			case errors.As(err, &over) && over.RetryAfter > 0:
				r.Add(1)
			default:
				t.Error(err)
			}
		}(lims[i%len(lims)])
	}
	wg.Wait()
	return a.Load(), r.Load()
}

// A batch takes n tokens; more than the burst at once is refused outright.
func TestTakeCountsEachEventOfABatch(t *testing.T) {
	env := testenv.New(t)
	l := ratelimit.New(env.DB, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey)
	if err := l.Take(ctx, "key_b", 3, slow); err != nil {
		t.Fatal(err)
	}
	var over *ratelimit.Limited
	if err := l.Take(ctx, "key_b", 3, slow); !errors.As(err, &over) {
		t.Fatalf("3 more of a burst of 5 after 3: %v, want Limited", err)
	}
	if err := l.Take(ctx, "key_b", 2, slow); err != nil {
		t.Fatalf("the 2 left: %v", err)
	}
	if err := l.Take(ctx, "key_c", 6, slow); !errors.Is(err, ratelimit.ErrExceedsBurst) {
		t.Fatalf("6 at once with a burst of 5: %v", err)
	}
}

// A second instance, which has never seen the key, reads the state from the
// refused write itself: it is refused with the same Retry-After, one call.
func TestAFreshInstanceLearnsFromTheRefusedWrite(t *testing.T) {
	env := testenv.New(t)
	a := ratelimit.New(env.DB, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey)
	b := ratelimit.New(env.DB, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey)
	if err := a.Take(ctx, "key_x", 5, slow); err != nil {
		t.Fatal(err)
	}
	var over *ratelimit.Limited
	if err := b.Take(ctx, "key_x", 1, slow); !errors.As(err, &over) {
		t.Fatalf("b: %v, want Limited", err)
	}
	// An empty bucket of rate 0.01/s: one token in 100 s, less the time passed.
	if over.RetryAfter <= 0 || over.RetryAfter > 100e9 {
		t.Fatalf("Retry-After %s, want up to 100s", over.RetryAfter)
	}
}

// counted is a DynamoDB client on env whose calls are counted, and its
// UpdateItem calls so far (the limiter makes no other).
func counted(env *testenv.Env) (*dynamodb.Client, func() int) {
	calls := testenv.NewCalls()
	db, _ := env.CountedClients(calls)
	return db, func() int { return calls.Count("DynamoDB.UpdateItem") }
}

// Once an instance has seen a key's bucket empty, it refuses that key's
// flood without a DynamoDB call until the next token is due.
func TestAnEmptyBucketSeenIsRefusedWithoutACall(t *testing.T) {
	env := testenv.New(t)
	db, writes := counted(env)
	l := ratelimit.New(db, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey)
	for i := 0; i < 5; i++ {
		if err := l.Take(ctx, "key_f", 1, slow); err != nil {
			t.Fatal(err)
		}
	}
	before := writes()
	var over *ratelimit.Limited
	for i := 0; i < 100; i++ {
		if err := l.Take(ctx, "key_f", 1, slow); !errors.As(err, &over) {
			t.Fatalf("take %d past the burst: %v", i, err)
		}
	}
	if n := writes() - before; n != 0 {
		t.Fatalf("100 refusals made %d DynamoDB calls, want 0", n)
	}
	if err := l.Refused("key_f", 1, slow); !errors.As(err, &over) {
		t.Fatalf("Refused for a key seen empty: %v, want Limited", err)
	}
	if err := l.Refused("key_g", 1, slow); err != nil {
		t.Fatalf("Refused for a key never seen: %v, want nil (only the table can tell)", err)
	}
	if err := l.Take(ctx, "key_g", 1, slow); err != nil || writes() != before+1 {
		t.Fatalf("another key: %v after %d calls, want allowed with one", err, writes()-before)
	}
}

// fast refills a token a millisecond, so a busy key's takes lease; under a
// frozen clock nothing refills while a test runs.
var fast = ratelimit.Limit{Rate: 1000, Burst: 100}

func frozen(lims ...*ratelimit.Limiter) *time.Time {
	now := time.UnixMilli(1_900_000_000_000)
	for _, l := range lims {
		l.WithClock(func() time.Time { return now })
	}
	return &now
}

// A busy key's events are admitted mostly from the tokens its instance took
// ahead: the lease doubles with the demand, so 60 events take 6 writes.
func TestABusyKeyIsAdmittedFromTokensTakenAhead(t *testing.T) {
	env := testenv.New(t)
	db, writes := counted(env)
	a := ratelimit.New(db, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey)
	frozen(a)
	for i := 0; i < 60; i++ {
		if err := a.Take(ctx, "key_busy", 1, fast); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	if n := writes(); n != 6 { // 1, 2, 4, 8, 16, 32 tokens
		t.Fatalf("60 takes made %d writes, want 6", n)
	}
	if a.Held("key_busy") != 3 {
		t.Fatalf("held %d after 63 taken for 60, want 3", a.Held("key_busy"))
	}
}

// Tokens are only ever taken from the shared bucket: however the instances'
// leases fall, what they admitted and what they still hold is the burst,
// never more.
func TestLeasesNeverAdmitPastTheBucket(t *testing.T) {
	lims := instances(testenv.New(t), 4)
	frozen(lims...)
	allowed, _ := takeAtOnce(t, lims, "key_race", 200, fast)
	held := 0
	for _, l := range lims {
		held += l.Held("key_race")
	}
	if allowed+int64(held) != int64(fast.Burst) {
		t.Fatalf("allowed %d and held %d, want %d between them", allowed, held, fast.Burst)
	}
	// What is held is still admitted, and then nothing more.
	for _, l := range lims {
		for l.Held("key_race") > 0 {
			if err := l.Take(ctx, "key_race", 1, fast); err != nil {
				t.Fatalf("a held token refused: %v", err)
			}
		}
		var over *ratelimit.Limited
		if err := l.Take(ctx, "key_race", 1, fast); !errors.As(err, &over) {
			t.Fatalf("past the burst: %v, want Limited", err)
		}
	}
}

// Tokens taken ahead are dropped a Window after they were taken, each by
// the write that took them: a later event asks the table again.
func TestTokensTakenAheadLastOneWindow(t *testing.T) {
	env := testenv.New(t)
	db, writes := counted(env)
	a := ratelimit.New(db, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey)
	now := frozen(a)
	for i := 0; i < 2; i++ { // 1 token, then 2: one held
		if err := a.Take(ctx, "key_w", 1, fast); err != nil {
			t.Fatal(err)
		}
	}
	if a.Held("key_w") != 1 || writes() != 2 {
		t.Fatalf("held %d after %d writes, want 1 after 2", a.Held("key_w"), writes())
	}
	// Half a Window on, a batch of 2 finds 1 held: it takes 2 and 2 ahead.
	*now = now.Add(ratelimit.Window / 2)
	if err := a.Take(ctx, "key_w", 2, fast); err != nil || a.Held("key_w") != 3 {
		t.Fatalf("the batch: %v, %d held, want 3 (1 of the first write, 2 of the second)", err, a.Held("key_w"))
	}
	*now = now.Add(ratelimit.Window / 2)
	if a.Held("key_w") != 2 {
		t.Fatalf("a Window after the first write: %d held, want its token dropped and 2 left", a.Held("key_w"))
	}
	*now = now.Add(ratelimit.Window / 2)
	if a.Held("key_w") != 0 {
		t.Fatal("a token taken ahead outlived its Window")
	}
	before := writes()
	if err := a.Take(ctx, "key_w", 1, fast); err != nil || writes() != before+1 {
		t.Fatalf("the take after the Windows: %v after %d writes, want one more write", err, writes()-before)
	}
}

// An API key's take rides on its account's booking: one write books the
// slots and takes the tokens; a key over its limit books nothing (the
// account's next free slot is where it was); the key's bucket is the one
// TakeOn (a resend, a recover) takes from, shared by every instance.
func TestAKeysTakeRidesOnTheAccountsBooking(t *testing.T) {
	env := testenv.New(t)
	db, writes := counted(env)
	lims := []*ratelimit.Limiter{
		ratelimit.New(db, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey),
		ratelimit.New(db, env.Table, store.RateKey, 5).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey),
	}
	frozen(lims...)
	take := ratelimit.KeyTake{ID: "key_b", N: 1, Limit: slow}
	var last ratelimit.Reservation
	for i := 0; i < 4; i++ { // four of the burst of five, from both instances
		r, err := lims[i%2].ReserveTaking(ctx, "acct_b", 2, 5, 0, take)
		if err != nil {
			t.Fatalf("booking %d: %v", i, err)
		}
		if i > 0 && !r.First.Equal(last.Slot(2)) {
			t.Fatalf("booking %d starts at %v, want %v (after the last)", i, r.First, last.Slot(2))
		}
		last = r
	}
	if n := writes(); n > 6 {
		t.Fatalf("4 bookings with their takes made %d writes, want one each (and one more each for the other instance's booking between)", n)
	}
	if err := lims[0].TakeOn(ctx, "acct_b", "key_b", 1, slow); err != nil { // the fifth: a resend
		t.Fatalf("the burst's last token: %v", err)
	}
	var over *ratelimit.Limited
	for _, l := range lims {
		if _, err := l.ReserveTaking(ctx, "acct_b", 2, 5, 0, take); !errors.As(err, &over) {
			t.Fatalf("past the burst: %v, want Limited", err)
		}
	}
	// Nothing was booked by the refusals: another key's booking gets the next slots.
	r, err := lims[1].ReserveTaking(ctx, "acct_b", 1, 5, 0, ratelimit.KeyTake{ID: "key_c", N: 1, Limit: slow})
	if err != nil || !r.First.Equal(last.Slot(2)) {
		t.Fatalf("another key's booking: %v at %v, want %v", err, r.First, last.Slot(2))
	}
}
