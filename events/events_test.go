// The sample events are test fixtures too: each must parse as the event its
// function receives, and round-trip without losing a field.
package events_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/onboard"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/redrive"
	"github.com/gifq/webhooks/shared/stats"
	"github.com/gifq/webhooks/shared/sweep"
)

func roundTrip(t *testing.T, file string, into any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	again, _ := json.Marshal(into)
	var a, b any
	_ = json.Unmarshal(raw, &a)
	_ = json.Unmarshal(again, &b)
	if !reflect.DeepEqual(dropNulls(a), dropNulls(b)) {
		t.Fatalf("%s does not round-trip:\n%s\n%s", file, raw, again)
	}
}

// dropNulls removes null and empty values, which the SDK types omit or keep as they like.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = dropNulls(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, dropNulls(e))
		}
		return out
	case string:
		if x == "" {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	}
	return v
}

func TestAPIGatewaySamples(t *testing.T) {
	files, _ := filepath.Glob("api-*.json")
	if len(files) < 3 {
		t.Fatalf("api samples: %v", files)
	}
	for _, f := range files {
		var req events.APIGatewayProxyRequest
		roundTrip(t, f, &req)
		if req.HTTPMethod == "" || !strings.HasPrefix(req.Path, "/") {
			t.Errorf("%s: %+v", f, req)
		}
		if req.HTTPMethod == "POST" {
			if _, err := ingest.Validate([]byte(req.Body)); err != nil {
				t.Errorf("%s: body is not a valid event: %v", f, err)
			}
		}
	}
}

func TestPayoutBodies(t *testing.T) {
	for _, f := range []string{"payout-gift-cards.json", "payout-crypto.json"} {
		raw, _ := os.ReadFile(f)
		if _, err := ingest.Validate(bytes.TrimSpace(raw)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestDeliverSample(t *testing.T) {
	var ev events.SQSEvent
	roundTrip(t, "deliver-sqs.json", &ev)
	kinds := map[string]bool{}
	for _, r := range ev.Records {
		m, err := queue.Decode(r.Body)
		if err != nil {
			t.Fatalf("record %s: %v", r.MessageId, err)
		}
		kinds[m.Kind] = true
	}
	if !kinds[queue.KindDeliver] || !kinds[queue.KindDeadLetter] {
		t.Fatalf("the sample should show both message kinds: %v", kinds)
	}
}

func TestSweeperSample(t *testing.T) {
	var ev events.EventBridgeEvent
	roundTrip(t, "sweeper.json", &ev)
	if ev.DetailType != "Scheduled Event" || ev.Source != "aws.events" {
		t.Fatalf("%+v", ev)
	}
}

// The scheduler rule's input selects the scheduler; the sweep's scheduled
// event selects the sweep.
func TestSchedulerSample(t *testing.T) {
	var in sweep.Invocation
	roundTrip(t, "scheduler.json", &in)
	if in.Mode != sweep.ModeSchedule {
		t.Fatalf("%+v", in)
	}
	raw, _ := os.ReadFile("sweeper.json")
	var sw sweep.Invocation
	if err := json.Unmarshal(raw, &sw); err != nil || sw.Mode != "" {
		t.Fatalf("sweeper.json selects mode %q (%v)", sw.Mode, err)
	}
}

func TestRedriveSamples(t *testing.T) {
	files, _ := filepath.Glob("redrive*.json")
	if len(files) < 3 {
		t.Fatalf("redrive samples: %v", files)
	}
	for _, f := range files {
		var req redrive.Request
		roundTrip(t, f, &req)
		if req.MaxMessages <= 0 {
			t.Errorf("%s: max_messages %d", f, req.MaxMessages)
		}
	}
}

// TestOpsSamples: the ops function's samples parse and are valid requests
// (the account id of ops-add-key.json is a placeholder of the right form).
func TestOpsSamples(t *testing.T) {
	files, _ := filepath.Glob("ops-*.json")
	if len(files) < 2 {
		t.Fatalf("ops samples: %v", files)
	}
	for _, f := range files {
		var req onboard.Request
		roundTrip(t, f, &req)
		if err := req.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The stats function's stream batch: a delivery delivered at its first
// attempt counts one attempt (2xx, under 100 ms) and one delivery for its
// endpoint and its account; the endpoint item's change counts nothing.
func TestStatsSample(t *testing.T) {
	var ev events.DynamoDBEvent
	raw, err := os.ReadFile("stats-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	updates := stats.Fold(stats.FromLambda(ev))
	if len(updates) != 2 {
		t.Fatalf("updates %+v, want the endpoint's and the account's", updates)
	}
	for _, u := range updates {
		want := stats.Counts{Attempts: 1, Delivered: 1}
		want.Classes[stats.Class2xx], want.Latency[stats.Bucket(84)] = 1, 1
		if u.Counts != want || u.Account != "acct_01M955CYYVYPT6RGNZME393FWZ" || u.Hour.Unix() != 1796540400/3600*3600 {
			t.Errorf("update %+v, want %+v in the hour of the record", u, want)
		}
	}
}
