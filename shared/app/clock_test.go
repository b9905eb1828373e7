package app_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
)

// The app's clock is every part's: the rate limiter books an idle
// account's slot at the app's now, not the host's. (The soak jumps the
// clock; with the limiter left on the host's, a worker 2 s ahead took every
// slot it booked for past and yielded its claims every second.)
func TestWithClockIsTheLimitersClockToo(t *testing.T) {
	env := testenv.New(t)
	cfg, err := config.Parse(func(k string) string {
		return map[string]string{"TABLE_NAME": env.Table, "QUEUE_URL": env.Queues.Delivery, "DLQ_URL": env.Queues.DLQ}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	// 2 s ahead, early in its second (a booking in a second's last 200 ms
	// starts at the next one).
	ahead := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(100 * time.Millisecond)
	a := app.New(cfg, env.DB, env.SQS, io.Discard, "test").WithClock(func() time.Time { return ahead })
	r, err := a.Limiter.Reserve(context.Background(), "acct_clock", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !r.First.Equal(ahead) || !a.Now().Equal(ahead) {
		t.Fatalf("an idle account's slot at %s, the app's now %s; want both %s", r.First, a.Now(), ahead)
	}
}
