package stats

import (
	"fmt"
	"time"
)

// Hour is one counter item as read back.
type Hour struct {
	Start time.Time
	Counts
}

// Windows are the windows a summary covers, in hours (the current hour
// included): at most MaxHours items are read.
var Windows = map[string]int{"hour": 1, "day": 24, "week": 168}

// MaxHours is the longest window: a week of hourly items.
const MaxHours = 168

// Span is the first and last hour of window w ending with now's hour.
func Span(w string, now time.Time) (from, to time.Time, err error) {
	n, ok := Windows[w]
	if !ok {
		return from, to, fmt.Errorf("window must be one of hour, day, week")
	}
	to = now.UTC().Truncate(time.Hour)
	return to.Add(-time.Duration(n-1) * time.Hour), to, nil
}

// Summary is a window's counters added up, with its hourly series.
type Summary struct {
	Window       string           `json:"window"`
	From         time.Time        `json:"from"`
	To           time.Time        `json:"to"` // the end of the last hour
	Attempts     int64            `json:"attempts"`
	Delivered    int64            `json:"delivered"`
	Failed       int64            `json:"failed"`
	DeadLettered int64            `json:"dead_lettered"`
	SuccessRate  *float64         `json:"success_rate"` // delivered / (delivered + failed); null when neither
	Latency      Latency          `json:"latency_ms"`
	StatusClass  map[string]int64 `json:"status_classes"`
	Series       []Point          `json:"series"`
}

// Latency is p50 and p99 read from the histogram's buckets (their upper
// bounds, ms).
type Latency struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
}

// Point is one hour of the series; hours without an item are zeros.
type Point struct {
	Hour         time.Time `json:"hour"`
	Attempts     int64     `json:"attempts"`
	Delivered    int64     `json:"delivered"`
	Failed       int64     `json:"failed"`
	DeadLettered int64     `json:"dead_lettered"`
}

// Summarize adds up the hours read for window w from..to (hour starts).
func Summarize(w string, from, to time.Time, hours []Hour) Summary {
	var total Counts
	byHour := map[time.Time]Counts{}
	for _, h := range hours {
		if h.Start.Before(from) || h.Start.After(to) {
			continue
		}
		total.Add(h.Counts)
		c := byHour[h.Start.UTC()]
		c.Add(h.Counts)
		byHour[h.Start.UTC()] = c
	}
	s := Summary{Window: w, From: from, To: to.Add(time.Hour), Attempts: total.Attempts, Delivered: total.Delivered,
		Failed: total.Failed, DeadLettered: total.DeadLettered, StatusClass: map[string]int64{},
		Latency: Latency{P50: Percentile(total.Latency, 0.50), P99: Percentile(total.Latency, 0.99)}}
	if done := total.Delivered + total.Failed; done > 0 {
		r := float64(total.Delivered) / float64(done)
		s.SuccessRate = &r
	}
	for i, name := range ClassNames {
		s.StatusClass[name] = total.Classes[i]
	}
	for t := from.UTC(); !t.After(to); t = t.Add(time.Hour) {
		c := byHour[t]
		s.Series = append(s.Series, Point{Hour: t, Attempts: c.Attempts, Delivered: c.Delivered, Failed: c.Failed, DeadLettered: c.DeadLettered})
	}
	return s
}
