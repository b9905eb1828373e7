package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gifq/webhooks/shared/domain"
)

// The documented rule for "event" (README, ErrBadEventType), written out
// here independently of the package's own expression.
var documentedEventType = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]*$`)

// FuzzValidate feeds arbitrary bodies to the check every POST /v1/events runs
// before anything is stored. Seeds: the f.Add calls and
// testdata/fuzz/FuzzValidate. Bodies near the 256 KiB limit are in
// TestValidateSizeLimit: seeds that large stall the fuzzer's minimizer.
//
//	go test -run '^$' -fuzz '^FuzzValidate$' -fuzztime 30s ./shared/ingest
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123"}}`,
		`{"event":"a"}`,
		`{"event":""}`,
		`{"event":null}`,
		`{"event":1}`,
		`{"Event":"payout.fulfilled"}`,
		`{"event":"payout.fulfilled","event":"x y"}`,
		`{"event":"pay\u002eout"}`,
		`[{"event":"a"}]`,
		`null`,
		` {"event":"a"} `,
		`{"event":"a"} {}`,
		"\xef\xbb\xbf{\"event\":\"a\"}",
		`{"event":"a","x":"\xff"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		eventType, err := Validate(body)
		if !bytes.Equal(body, orig) {
			t.Fatalf("Validate changed its input")
		}
		if err != nil {
			if eventType != "" {
				t.Fatalf("rejected (%v) but returned type %q", err, eventType)
			}
			for _, known := range []error{ErrTooLarge, ErrInvalidJSON, ErrNoEventType, ErrBadEventType, ErrDuplicateEvent} {
				if errors.Is(err, known) {
					if wantAccepted(body) {
						t.Fatalf("rejected a valid body (%v): %q", err, trim(body))
					}
					return
				}
			}
			t.Fatalf("unexpected error %v", err)
		}
		if len(body) > domain.MaxBodyBytes {
			t.Fatalf("accepted a %d-byte body", len(body))
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted a body that is not valid UTF-8 JSON: %q", trim(body))
		}
		obj, ok := decodeObject(body)
		if !ok {
			t.Fatalf("accepted a body that is not a JSON object: %q", trim(body))
		}
		if eventKeys(body) != 1 {
			t.Fatalf("accepted a body with \"event\" %d times: %q", eventKeys(body), trim(body))
		}
		if got, ok := obj["event"].(string); !ok || got != eventType {
			t.Fatalf("returned type %q, body's event is %#v", eventType, obj["event"])
		}
		if !documentedEventType.MatchString(eventType) || len(eventType) > 200 {
			t.Fatalf("accepted event type %q outside the documented pattern", eventType)
		}
	})
}

// The same properties on bodies at the limit, which the fuzzer cannot reach.
func TestValidateSizeLimit(t *testing.T) {
	limit := domain.MaxBodyBytes
	if typ, err := Validate(bodyOfSize(limit)); err != nil || typ != "payout.fulfilled" {
		t.Fatalf("a body of exactly 256 KiB: %q, %v", typ, err)
	}
	if _, err := Validate(bodyOfSize(limit + 1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a body of 256 KiB + 1: %v", err)
	}
	// A multi-byte character ending exactly at the limit, and one crossing it.
	at := bodyOfSize(limit)
	copy(at[len(at)-4:], "é\"}")
	if _, err := Validate(at); err != nil {
		t.Fatalf("é ending at the limit: %v", err)
	}
	over := append(bodyOfSize(limit - 1)[:limit-3], []byte("é\"}")...)
	if _, err := Validate(over); !errors.Is(err, ErrTooLarge) || len(over) != limit+1 {
		t.Fatalf("%d bytes with é across the limit: %v", len(over), err)
	}
	// Invalid UTF-8 inside a string at the limit is refused, not repaired.
	bad := bodyOfSize(limit)
	bad[len(bad)-3] = 0xff
	if _, err := Validate(bad); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("invalid UTF-8 at the limit: %v", err)
	}
}

// wantAccepted is the documented contract, decided without Validate.
func wantAccepted(body []byte) bool {
	if len(body) > domain.MaxBodyBytes || !utf8.Valid(body) {
		return false
	}
	obj, ok := decodeObject(body)
	if !ok {
		return false
	}
	s, ok := obj["event"].(string)
	return ok && len(s) <= 200 && documentedEventType.MatchString(s) && eventKeys(body) == 1
}

// eventKeys counts "event" among the top-level names, duplicates included.
func eventKeys(body []byte) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			return n
		}
		if name == "event" {
			n++
		}
		var v any
		if dec.Decode(&v) != nil {
			return n
		}
	}
	return n
}

// decodeObject reads body as one JSON object. Numbers stay text: JSON allows
// 1e999999 even though no float64 holds it.
func decodeObject(body []byte) (map[string]any, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

func bodyOfSize(n int) []byte {
	const head, tail = `{"event":"payout.fulfilled","pad":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

func trim(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
