package keylimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/keylimit"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

// A slow rate, so no token refills while a test runs however loaded the machine.
var slow = keylimit.Limit{Rate: 0.01, Burst: 5}

// Several instances sharing the table hand out exactly the burst between
// them, and a refusal takes nothing from the bucket.
func TestInstancesShareOneBucketPerKey(t *testing.T) {
	env := testenv.New(t)
	var allowed, limited atomic.Int64
	var wg sync.WaitGroup
	lims := []*keylimit.Limiter{}
	for i := 0; i < 4; i++ {
		lims = append(lims, keylimit.New(env.DB, env.Table, schema.Table.TTLAttribute, store.IngestLimitKey))
	}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(l *keylimit.Limiter) {
			defer wg.Done()
			err := l.Take(ctx, "key_flood", 1, slow)
			var over *keylimit.Limited
			switch {
			case err == nil:
				allowed.Add(1)
			case errors.As(err, &over) && over.RetryAfter > 0:
				limited.Add(1)
			default:
				t.Error(err)
			}
		}(lims[i%4])
	}
	wg.Wait()
	if allowed.Load() != 5 || limited.Load() != 35 {
		t.Fatalf("allowed %d, limited %d; want the burst of 5 and 35 refused", allowed.Load(), limited.Load())
	}
	// Another key has its own bucket.
	if err := lims[0].Take(ctx, "key_quiet", 5, slow); err != nil {
		t.Fatalf("another key's burst: %v", err)
	}
}

// A batch takes n tokens; more than the burst at once is refused outright.
func TestTakeCountsEachEventOfABatch(t *testing.T) {
	env := testenv.New(t)
	l := keylimit.New(env.DB, env.Table, schema.Table.TTLAttribute, store.IngestLimitKey)
	if err := l.Take(ctx, "key_b", 3, slow); err != nil {
		t.Fatal(err)
	}
	var over *keylimit.Limited
	if err := l.Take(ctx, "key_b", 3, slow); !errors.As(err, &over) {
		t.Fatalf("3 more of a burst of 5 after 3: %v, want Limited", err)
	}
	if err := l.Take(ctx, "key_b", 2, slow); err != nil {
		t.Fatalf("the 2 left: %v", err)
	}
	if err := l.Take(ctx, "key_c", 6, slow); !errors.Is(err, keylimit.ErrExceedsBurst) {
		t.Fatalf("6 at once with a burst of 5: %v", err)
	}
}

// A second instance, which has never seen the key, reads the state from the
// refused write itself: it is refused with the same Retry-After, one call.
func TestAFreshInstanceLearnsFromTheRefusedWrite(t *testing.T) {
	env := testenv.New(t)
	a := keylimit.New(env.DB, env.Table, schema.Table.TTLAttribute, store.IngestLimitKey)
	b := keylimit.New(env.DB, env.Table, schema.Table.TTLAttribute, store.IngestLimitKey)
	if err := a.Take(ctx, "key_x", 5, slow); err != nil {
		t.Fatal(err)
	}
	var over *keylimit.Limited
	if err := b.Take(ctx, "key_x", 1, slow); !errors.As(err, &over) {
		t.Fatalf("b: %v, want Limited", err)
	}
	// An empty bucket of rate 0.01/s: one token in 100 s, less the time passed.
	if over.RetryAfter <= 0 || over.RetryAfter > 100e9 {
		t.Fatalf("Retry-After %s, want up to 100s", over.RetryAfter)
	}
}

type countingDB struct {
	keylimit.DynamoDB
	calls atomic.Int64
}

func (c *countingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.calls.Add(1)
	return c.DynamoDB.UpdateItem(ctx, in, opts...)
}

// Once an instance has seen a key's bucket empty, it refuses that key's
// flood without a DynamoDB call until the next token is due.
func TestAnEmptyBucketSeenIsRefusedWithoutACall(t *testing.T) {
	env := testenv.New(t)
	db := &countingDB{DynamoDB: env.DB}
	l := keylimit.New(db, env.Table, schema.Table.TTLAttribute, store.IngestLimitKey)
	for i := 0; i < 5; i++ {
		if err := l.Take(ctx, "key_f", 1, slow); err != nil {
			t.Fatal(err)
		}
	}
	before := db.calls.Load()
	var over *keylimit.Limited
	for i := 0; i < 100; i++ {
		if err := l.Take(ctx, "key_f", 1, slow); !errors.As(err, &over) {
			t.Fatalf("take %d past the burst: %v", i, err)
		}
	}
	if n := db.calls.Load() - before; n != 0 {
		t.Fatalf("100 refusals made %d DynamoDB calls, want 0", n)
	}
	if err := l.Refused("key_f", 1, slow); !errors.As(err, &over) {
		t.Fatalf("Refused for a key seen empty: %v, want Limited", err)
	}
	if err := l.Refused("key_g", 1, slow); err != nil {
		t.Fatalf("Refused for a key never seen: %v, want nil (only the table can tell)", err)
	}
	if err := l.Take(ctx, "key_g", 1, slow); err != nil || db.calls.Load() != before+1 {
		t.Fatalf("another key: %v after %d calls, want allowed with one", err, db.calls.Load()-before)
	}
}
