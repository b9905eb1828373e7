package domain

import (
	"sort"
	"testing"
	"time"
)

func TestULIDSortsByTime(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000)
	var ids []string
	for i := 0; i < 50; i++ {
		ids = append(ids, ulid(base.Add(time.Duration(i)*time.Millisecond)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("ids made later must sort later: %v", ids)
	}
	if len(ids[0]) != 26 {
		t.Fatalf("len = %d, want 26", len(ids[0]))
	}
}

func TestNewIDShape(t *testing.T) {
	id := NewID("evt")
	if !HasPrefix(id, "evt") {
		t.Fatalf("%q does not look like an evt id", id)
	}
	for _, bad := range []string{"evt_", "dlv_" + id[4:], "evt_" + id[4:29] + "u", id + "0"} {
		if HasPrefix(bad, "evt") {
			t.Errorf("%q must not pass as an evt id", bad)
		}
	}
	if a, b := NewID("evt"), NewID("evt"); a == b {
		t.Fatal("two ids made in the same millisecond must differ")
	}
}

func TestIDBound(t *testing.T) {
	at := time.UnixMilli(1_764_460_800_000)
	id := "dlv_" + ulid(at)
	lo, hi := IDBound("dlv", at.UnixMilli(), false), IDBound("dlv", at.UnixMilli(), true)
	if !(lo <= id && id <= hi) {
		t.Fatalf("%s not within [%s, %s]", id, lo, hi)
	}
	if before := "dlv_" + ulid(at.Add(-time.Millisecond)); before >= lo {
		t.Fatalf("an id a millisecond earlier (%s) is not below %s", before, lo)
	}
	if after := "dlv_" + ulid(at.Add(time.Millisecond)); after <= hi {
		t.Fatalf("an id a millisecond later (%s) is not above %s", after, hi)
	}
}

func TestIDMillis(t *testing.T) {
	for _, ms := range []int64{0, 1, 1733100000123, 1<<48 - 1} {
		for _, id := range []string{IDBound("evt", ms, false), IDBound("evt", ms, true), "dlv_" + ulid(time.UnixMilli(ms))} {
			if got, ok := IDMillis(id); !ok || got != ms {
				t.Errorf("IDMillis(%s) = %d %v, want %d", id, got, ok, ms)
			}
		}
	}
	for _, bad := range []string{"", "evt_", "evt_0123", "evt_UUUUUUUUUUUUUUUUUUUUUUUUUU"} {
		if _, ok := IDMillis(bad); ok {
			t.Errorf("IDMillis(%q) ok", bad)
		}
	}
}
