package ingest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
)

// Ingest's messages carry their event's body and type when it is at most
// queue.CarriedBodyMax, so the worker need not read the event's item, and
// then the delivery as ingest wrote it (queue.Message.First), so it need
// not read that either; a bigger body stays in the table alone, and the
// worker reads both. One by one and in a batch.
func TestIngestsMessagesCarryTheirEventsBody(t *testing.T) {
	small := []byte(`{"event":"payout.fulfilled","amount":1}`)
	big := []byte(`{"event":"payout.fulfilled","pad":"` + strings.Repeat("x", queue.CarriedBodyMax) + `"}`)
	var st *keyedStore
	newService := func(q *recordingQueue) *Service {
		st = &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}
		return &Service{Store: st, Queue: q, Limiter: failingLimiter{}, DefaultRate: 5,
			Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
	}
	check := func(name string, sent []queue.Outgoing, body []byte, carried bool) {
		t.Helper()
		if len(sent) == 0 {
			t.Fatalf("%s: nothing sent", name)
		}
		for _, o := range sent {
			m := o.Message
			switch {
			case carried && (!bytes.Equal(m.Body, body) || m.EventType != "payout.fulfilled"):
				t.Fatalf("%s: message carries %q (%q), want the event's body", name, m.Body, m.EventType)
			case carried && (m.Event() == nil || m.Event().ID != m.EventID || m.Event().AccountID != m.AccountID):
				t.Fatalf("%s: the event it carries: %+v", name, m.Event())
			case !carried && (m.Body != nil || m.Event() != nil || m.First != nil || m.Delivery() != nil):
				t.Fatalf("%s: a %d-byte body carried, or its delivery", name, len(body))
			case carried && (m.Delivery() == nil || !reflect.DeepEqual(*m.Delivery(), st.deliveries[m.DeliveryID])):
				t.Fatalf("%s: the message's delivery\n%+v\nis not the one written\n%+v", name, m.Delivery(), st.deliveries[m.DeliveryID])
			}
		}
	}
	for _, c := range []struct {
		body    []byte
		carried bool
	}{{small, true}, {big, false}} {
		q := &recordingQueue{}
		if _, err := newService(q).Ingest(context.Background(), "acct_1", c.body, ""); err != nil {
			t.Fatal(err)
		}
		check("one by one", q.sent, c.body, c.carried)
		q = &recordingQueue{}
		if _, err := newService(q).IngestBatch(context.Background(), "acct_1", []Item{{Body: c.body}}); err != nil {
			t.Fatal(err)
		}
		check("batch", q.sent, c.body, c.carried)
	}
}
