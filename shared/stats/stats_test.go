package stats

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 6, 7, 10, 0, 0, time.UTC)

func img(status, att string, code int, ms int64, dlq bool) *Image {
	return &Image{Account: "acct_1", Endpoint: "ep_1", Status: status, LastAttemptID: att, LastStatus: code, LastMs: ms, DLQPending: dlq}
}

func TestFoldCountsWhatChanged(t *testing.T) {
	claim := Change{Old: img("pending", "", 0, 0, false), New: img("pending", "", 0, 0, false), At: t0}
	retry := Change{Old: img("pending", "", 0, 0, false), New: img("pending", "att_1", 503, 120, false), At: t0}
	again := Change{Old: retry.New, New: img("pending", "att_1", 503, 120, false), At: t0} // a claim after it: same attempt
	delivered := Change{Old: img("pending", "att_1", 503, 120, false), New: img("delivered", "att_2", 200, 40, false), At: t0}
	network := Change{Old: img("pending", "att_3", 500, 9, false), New: img("failed", "att_4", 0, 10001, true), At: t0.Add(time.Hour)}
	dead := Change{Old: network.New, New: img("failed", "att_4", 0, 10001, false), At: t0.Add(time.Hour)}
	insert := Change{New: img("pending", "", 0, 0, false), At: t0}
	other := Change{Old: img("pending", "", 0, 0, false), New: &Image{Account: "acct_1", Endpoint: "ep_2", Status: "delivered", LastAttemptID: "att_9", LastStatus: 302, LastMs: 700}, At: t0}

	got := Fold([]Change{claim, retry, again, delivered, network, dead, insert, other})
	h0, h1 := t0.Truncate(time.Hour), t0.Add(time.Hour).Truncate(time.Hour)
	want := []Update{
		{Key{"acct_1", "", h0}, Counts{Attempts: 3, Delivered: 2, Classes: [NumClasses]int64{1, 1, 0, 1, 0}, Latency: [NumBuckets]int64{1, 0, 1, 0, 1}}},
		{Key{"acct_1", "", h1}, Counts{Attempts: 1, Failed: 1, DeadLettered: 1, Classes: [NumClasses]int64{0, 0, 0, 0, 1}, Latency: [NumBuckets]int64{8: 1}}},
		{Key{"acct_1", "ep_1", h0}, Counts{Attempts: 2, Delivered: 1, Classes: [NumClasses]int64{1, 0, 0, 1, 0}, Latency: [NumBuckets]int64{1, 0, 1}}},
		{Key{"acct_1", "ep_1", h1}, Counts{Attempts: 1, Failed: 1, DeadLettered: 1, Classes: [NumClasses]int64{0, 0, 0, 0, 1}, Latency: [NumBuckets]int64{8: 1}}},
		{Key{"acct_1", "ep_2", h0}, Counts{Attempts: 1, Delivered: 1, Classes: [NumClasses]int64{0, 1, 0, 0, 0}, Latency: [NumBuckets]int64{4: 1}}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d updates, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("update %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestFoldSkipsWhatCountsNothing(t *testing.T) {
	redriven := Change{Old: img("failed", "att_1", 500, 5, true), New: img("pending", "att_1", 500, 5, false), At: t0}
	removed := Change{Old: img("delivered", "att_1", 200, 5, false), At: t0}
	if got := Fold([]Change{redriven, removed}); len(got) != 0 {
		t.Fatalf("got %+v, want nothing", got)
	}
}

func TestPercentileFromBuckets(t *testing.T) {
	var h [NumBuckets]int64
	if Percentile(h, 0.5) != 0 {
		t.Fatal("empty histogram")
	}
	h[0], h[3], h[8] = 60, 39, 1 // 60 under 50 ms, 39 under 500 ms, 1 slower than 10 s
	if p := Percentile(h, 0.5); p != 50 {
		t.Errorf("p50 = %d, want 50", p)
	}
	if p := Percentile(h, 0.99); p != 500 {
		t.Errorf("p99 = %d, want 500", p)
	}
	h[8] = 10
	if p := Percentile(h, 0.99); p != 10000 {
		t.Errorf("p99 = %d, want 10000", p)
	}
}

func TestSummarizeFillsTheSeries(t *testing.T) {
	from, to, err := Span("day", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Span("month", t0); err == nil {
		t.Fatal("month accepted")
	}
	hours := []Hour{
		{to, Counts{Attempts: 4, Delivered: 3, Failed: 1, Classes: [NumClasses]int64{3, 0, 0, 1, 0}, Latency: [NumBuckets]int64{3, 1}}},
		{to.Add(-2 * time.Hour), Counts{Attempts: 1, Delivered: 1}},
		{from.Add(-time.Hour), Counts{Attempts: 100}}, // outside the window
	}
	s := Summarize("day", from, to, hours)
	if s.Attempts != 5 || s.Delivered != 4 || s.Failed != 1 || s.SuccessRate == nil || *s.SuccessRate != 0.8 {
		t.Fatalf("summary %+v", s)
	}
	if len(s.Series) != 24 || s.Series[23].Attempts != 4 || s.Series[21].Delivered != 1 || s.Series[22].Attempts != 0 {
		t.Fatalf("series %+v", s.Series)
	}
	if s.StatusClass["2xx"] != 3 || s.StatusClass["5xx"] != 1 || s.Latency.P50 != 50 || s.Latency.P99 != 100 {
		t.Fatalf("classes %v latency %+v", s.StatusClass, s.Latency)
	}
	if empty := Summarize("hour", to, to, nil); empty.SuccessRate != nil || len(empty.Series) != 1 {
		t.Fatalf("empty %+v", empty)
	}
}
