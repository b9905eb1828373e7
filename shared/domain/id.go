// Package domain holds the types every part of the pipeline shares: accounts,
// endpoints, events, deliveries and attempts, and how their ids are made.
package domain

import (
	"crypto/rand"
	"strings"
	"time"
)

// crockford is Crockford's base32 alphabet: ids built from it sort by time as strings.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix_ followed by a 26-character ULID: 48 bits of milliseconds
// then 80 random bits. Ids made later sort after ids made earlier (to the
// millisecond), which is what the newest-first delivery log relies on.
func NewID(prefix string) string {
	return prefix + "_" + ulid(time.Now())
}

func ulid(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	// 128 bits as 26 base32 digits: the first digit carries the top 3 bits.
	var out [26]byte
	var acc uint32
	bits := 2 // 130 - 128: pad two zero bits at the front
	j := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[j] = crockford[(acc>>uint(bits))&31]
			j++
		}
	}
	return string(out[:j])
}

// HasPrefix reports whether id looks like an id made by NewID(prefix).
func HasPrefix(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 26 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(crockford, rest[i]) < 0 {
			return false
		}
	}
	return true
}

// IDBound is the smallest (or, with upper, the largest) id NewID(prefix)
// can make in millisecond ms: ids sort by time, so a time window is an id range.
func IDBound(prefix string, ms int64, upper bool) string {
	id := ulid(time.UnixMilli(ms))[:10] // 48 bits of time: the first 10 digits
	if upper {
		return prefix + "_" + id + strings.Repeat("Z", 16)
	}
	return prefix + "_" + id + strings.Repeat("0", 16)
}

// IDMillis is the millisecond an id made by NewID carries (its first 10
// digits: 48 bits of time); ok is false for anything else.
func IDMillis(id string) (ms int64, ok bool) {
	i := strings.LastIndexByte(id, '_')
	if i < 0 || len(id)-i-1 != 26 {
		return 0, false
	}
	for _, c := range []byte(id[i+1 : i+11]) {
		d := strings.IndexByte(crockford, c)
		if d < 0 {
			return 0, false
		}
		ms = ms<<5 | int64(d)
	}
	return ms, true // 50 bits of digits: ulid's two zero bits of padding, then the 48 of time
}
