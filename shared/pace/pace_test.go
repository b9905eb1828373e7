package pace_test

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/pace"
)

var t0 = time.Date(2026, 12, 6, 8, 0, 10, 0, time.UTC) // a second's start

func ms(d int) time.Time { return t0.Add(time.Duration(d) * time.Millisecond) }

// The delay lands a message in [its second - Early, its second + 1 s - Early),
// in whole seconds, from any send time.
func TestDelayLandsAMessageAtMostEarlyBeforeItsSecond(t *testing.T) {
	for _, c := range []struct {
		name      string
		slot, now time.Time
		want      time.Duration
	}{
		{"a slot in the current second: at once", ms(700), ms(100), 0},
		{"a slot past: at once", ms(-3000), ms(100), 0},
		{"the next second, sent Early before it: at once, waits Early", ms(1500), ms(800), 0},
		{"the next second, sent just before Early: 1 s, lands late in it", ms(1500), ms(799), time.Second},
		{"five seconds on, sent mid-second", ms(5999), ms(500), 5 * time.Second},
		{"five seconds on, sent early in a second", ms(5000), ms(50), 5 * time.Second},
	} {
		d := pace.Delay(c.slot, c.now)
		if d != c.want {
			t.Errorf("%s: %s, want %s", c.name, d, c.want)
		}
		second := pace.Second(c.slot)
		if at := c.now.Add(d); d > 0 && (at.Before(second.Add(-pace.Early)) || !at.Before(second.Add(time.Second-pace.Early))) {
			t.Errorf("%s: lands at %s, outside [second - Early, second + 1 s - Early)", c.name, at.Sub(second))
		}
	}
}

// A slot is used from its second's start while more than SendBy of it is
// left; before, the delivery waits for the second; after, it is late.
func TestASlotIsUsableDuringItsSecondUntilSendBy(t *testing.T) {
	slot := ms(1700)
	for _, c := range []struct {
		now    time.Time
		usable bool
		wait   time.Duration
	}{
		{ms(900), true, 100 * time.Millisecond},
		{ms(1000), true, 0},
		{ms(1200), true, 0}, // before the slot itself: its second is what counts
		{ms(1899), true, 0},
		{ms(1900), false, 0},
		{ms(2100), false, 0},
	} {
		if got := pace.Usable(slot, c.now); got != c.usable {
			t.Errorf("at %s: usable %v, want %v", c.now.Sub(t0), got, c.usable)
		}
		if got := pace.Wait(slot, c.now); got != c.wait {
			t.Errorf("at %s: wait %s, want %s", c.now.Sub(t0), got, c.wait)
		}
	}
}
