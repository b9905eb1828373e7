package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/notify"
)

// An endpoint failing in the last day before ENDPOINT_DISABLE_AFTER (5
// days) makes the account's notification endpoint receive a signed
// endpoint.disabling once, however many failures come in that day, then
// endpoint.disabled when a failure comes past the limit. The operational
// event is stated once too (the conditional write picks one attempt; the
// notice's daily idempotency key alone would hide a second).
func TestNotificationEndpointHearsOfTheComingDisableOnce(t *testing.T) {
	t.Parallel()
	localOnly(t)
	logs := &lockedBuffer{}
	h := start(t, opts{retry: "1h", logs: logs, env: map[string]string{"LOG_LEVEL": "info"}}) // operational events are info lines
	acct, key := h.account(t)
	notes, _ := h.registerReceiver(t, key, always(200), "endpoint.*")
	// It answers slowly, so that attempts overlap.
	down, ep := h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) {
		time.Sleep(300 * time.Millisecond)
		return 503, ""
	})
	since := time.Now().Add(-(4*24 + 12) * time.Hour).Truncate(time.Millisecond)
	setFailingSince(t, h, acct, ep.ID, since)
	// Five failures at once (concurrent attempts that all read the
	// endpoint unwarned), then one more after them.
	var ids []string
	for range 5 {
		ids = append(ids, h.publish(t, key, payout).Deliveries[0].ID)
	}
	for _, id := range append(ids, h.publish(t, key, payout).Deliveries[0].ID) {
		h.waitFor(t, key, id, 15*time.Second, func(d deliveryOut) bool { return len(d.Attempts) == 1 })
	}
	// Six days: the next failure disables it.
	setFailingSince(t, h, acct, ep.ID, time.Now().Add(-6*24*time.Hour))
	ev := h.publish(t, key, payout)
	h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, func(d deliveryOut) bool { return len(d.Attempts) == 1 })

	var got []notify.Body
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got = got[:0]
		for _, r := range notes.requests() {
			if r.verified != nil {
				t.Fatalf("a notice that does not verify with the notification endpoint's secret: %v", r.verified)
			}
			var b notify.Body
			if err := json.Unmarshal(r.body, &b); err != nil {
				t.Fatalf("notice %s: %v", r.body, err)
			}
			got = append(got, b)
		}
	}
	time.Sleep(time.Second) // a second warning, were there one, would be in by now
	if n := len(notes.requests()); len(got) != 2 || n != 2 || got[0].Event != "endpoint.disabling" || got[1].Event != "endpoint.disabled" {
		t.Fatalf("notices (%d requests): %+v (the failing endpoint saw %d requests)", n, got, len(down.requests()))
	}
	if n := strings.Count(logs.String(), `"detail-type":"endpoint.disabling"`); n != 1 {
		t.Errorf("endpoint.disabling stated %d times, want 1", n)
	}
	w := got[0]
	if w.Endpoint.ID != ep.ID || w.LastStatus != 503 || w.Message == "" || w.Recover == nil || w.Recover.Path != "/v1/endpoints/"+ep.ID+"/recover" {
		t.Errorf("endpoint.disabling: %+v", w)
	}
	began, err1 := time.Parse(time.RFC3339, w.FailingSince)
	disables, err2 := time.Parse(time.RFC3339, w.DisablesAt)
	if err1 != nil || err2 != nil || !began.Equal(since) || !disables.Equal(since.Add(5*24*time.Hour)) {
		t.Errorf("endpoint.disabling: failing since %s, disables at %s; want %s and 5 days on", w.FailingSince, w.DisablesAt, since.UTC())
	}
}

// setFailingSince writes an endpoint's failing_since in the table, as if
// it had been failing since then.
func setFailingSince(t *testing.T, h *harness, acct, endpointID string, since time.Time) {
	t.Helper()
	_, err := h.env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(h.env.Table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "ACCT#" + acct}, "sk": &types.AttributeValueMemberS{Value: "EP#" + endpointID}},
		UpdateExpression:          aws.String("SET failing_since = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: strconv.FormatInt(since.UnixMilli(), 10)}},
	})
	if err != nil {
		t.Fatal(err)
	}
}
