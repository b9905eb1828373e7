package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestEscapedLenMatchesJSONEncoding(t *testing.T) {
	for _, body := range []string{``, `plain`, `{"a":"b"}`, `{"pad":"\"\"\\\\"}`, "line\nbreak\ttab\r", "\x00\x01\x1f", "ünï<&>"} {
		enc, _ := json.Marshal(body)
		// encoding/json also escapes <, > and & (as \u003c...) for HTML; a
		// JSON encoder need not (API Gateway's does not), so count without them.
		want := len(enc) - 2 - 5*strings.Count(body, "<") - 5*strings.Count(body, ">") - 5*strings.Count(body, "&")
		if got := escapedLen([]byte(body)); got != want {
			t.Errorf("%q: %d, want %d", body, got, want)
		}
	}
}

// batchOf is a batch of n events whose "pad" string holds each.
func batchOf(n int, pad string) []byte {
	ev := `{"body":{"event":"a","pad":"` + pad + `"}}`
	return []byte(`{"events":[` + strings.TrimSuffix(strings.Repeat(ev+",", n), ",") + `]}`)
}

// Issue 26: a quote-heavy batch under 5 MiB passes Lambda's 6 MiB once
// API Gateway escapes it into the event; it must get a clear 413, not a
// 5xx. The same size without quotes is within both bounds.
func TestQuoteHeavyBatchIs413(t *testing.T) {
	quotes := batchOf(100, strings.Repeat(`\"`, 20000)) // 100 events of 40 KB: 4 MB raw, ~8 MB escaped
	plain := batchOf(100, strings.Repeat(`xx`, 20000))
	if len(quotes) != len(plain) || len(quotes) > maxBatchBody {
		t.Fatalf("sizes %d and %d, want equal and under %d", len(quotes), len(plain), maxBatchBody)
	}
	if _, tooLarge := batchTooLarge(plain); tooLarge {
		t.Errorf("a %d-byte batch without quotes (escaped %d) was refused", len(plain), escapedLen(plain))
	}
	a := &API{}
	r := a.postEventBatch(context.Background(), &request{body: quotes})
	if r.status != 413 || r.code() != "body_too_large" {
		t.Fatalf("quote-heavy batch: %d %s, want 413 body_too_large", r.status, r.code())
	}
	msg := r.body.(errorBody).Error.Message
	if !strings.Contains(msg, "JSON-escaped") || !strings.Contains(msg, "send fewer events") {
		t.Errorf("message %q does not say why or what to do", msg)
	}
	// Over 5 MiB raw: refused as before.
	if r, tooLarge := batchTooLarge(batchOf(140, strings.Repeat("x", 40000))); !tooLarge || r.status != 413 {
		t.Errorf("a batch over 5 MiB: %v %d", tooLarge, r.status)
	}
}
