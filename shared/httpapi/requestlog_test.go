package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// An accepted event costs one info log line: the request's, which names the
// event, its account and its deliveries (ingest's own line is debug).
func TestAcceptedEventIsOneInfoLine(t *testing.T) {
	f := newFixture(t, map[string]string{"LOG_LEVEL": "info"})
	ep := f.endpoint(t, f.keyA)
	before := len(f.logs.String())
	a := f.do(t, f.keyA, http.MethodPost, "/v1/events", `{"event":"payout.fulfilled","data":{"id":"po_1"}}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("POST /v1/events: %d %s", a.status, a.raw)
	}
	lines := strings.Split(strings.TrimSpace(f.logs.String()[before:]), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d log lines for one accepted event, want 1:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	deliveries := a.body["deliveries"].([]any)
	if line["level"] != "INFO" || line["msg"] != "request" || line["status"] != 202.0 || line["event_id"] != a.body["id"] ||
		line["account_id"] != f.acctA || line["event_type"] != "payout.fulfilled" || line["deliveries"] != 1.0 || len(deliveries) != 1 ||
		deliveries[0].(map[string]any)["endpoint_id"] != ep {
		t.Fatalf("the request line does not name the accepted event: %s (answer %s)", lines[0], a.raw)
	}
}
