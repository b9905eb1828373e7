package httpapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// writeAttempts puts n attempts of a delivery straight into the table (as
// the deliver function logs them: pk DLV#<delivery>, sk ATT#<attempt>), each
// with the largest response excerpt kept and the worst case for JSON: 1 KiB
// of '<', which encodes as \u003c, six bytes each. It returns their ids.
func (f *fixture) writeAttempts(t *testing.T, deliveryID string, n int) []string {
	t.Helper()
	body := strings.Repeat("<", domain.MaxResponseBytes)
	ids := make([]string, 0, n)
	var batch []types.WriteRequest
	flush := func() {
		for len(batch) > 0 {
			out, err := f.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{f.table: batch}})
			if err != nil {
				t.Fatal(err)
			}
			batch = out.UnprocessedItems[f.table]
		}
	}
	for i := 0; i < n; i++ {
		a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: deliveryID, Kind: domain.AttemptKind("manual"), Series: 1,
			StartedAt: domain.Millis(f.now), DurationMs: 10000, StatusCode: 500, ResponseBody: body, ResponseTruncated: true,
			Outcome: domain.AttemptOutcome("retry")}
		it, err := attributevalue.MarshalMap(a)
		if err != nil {
			t.Fatal(err)
		}
		it["pk"] = &types.AttributeValueMemberS{Value: "DLV#" + deliveryID}
		it["sk"] = &types.AttributeValueMemberS{Value: "ATT#" + a.ID}
		ids = append(ids, a.ID)
		if batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}); len(batch) == 25 {
			flush()
		}
	}
	flush()
	return ids
}

// lambdaSize is the size of the answer as Lambda returns it (the body
// escaped once more inside the proxy response): what its 6 MB limit counts.
func (f *fixture) lambdaSize(t *testing.T, in events.APIGatewayProxyRequest) (int, answer) {
	t.Helper()
	out, err := f.api.Handle(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	var a answer
	a.status, a.raw = out.StatusCode, out.Body
	_ = json.Unmarshal([]byte(out.Body), &a.body)
	return len(raw), a
}

// A delivery with thousands of attempts: GET /v1/deliveries/{id} shows the
// newest 20, newest first, with a cursor; GET .../attempts pages through
// all the others, each answer far under Lambda's 6 MB (under 1 MB).
func TestDeliveryViewIsBoundedWithThousandsOfAttempts(t *testing.T) {
	const n = 3000
	f := newFixture(t, nil)
	f.endpoint(t, f.keyA)
	ev := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`)
	if ev.status != 202 {
		t.Fatalf("event: %d %s", ev.status, ev.raw)
	}
	dlv := ev.body["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	ids := f.writeAttempts(t, dlv, n)
	slices.Sort(ids)
	slices.Reverse(ids) // newest first

	const limit = 1 << 20
	size, d := f.lambdaSize(t, get(f.keyA, "/v1/deliveries/"+dlv, nil))
	attempts, _ := d.body["attempts"].([]any)
	if d.status != 200 || size > limit || len(attempts) != 20 || d.body["attempts_order"] != "newest_first" {
		t.Fatalf("the delivery: %d, %d bytes, %d attempts, order %v", d.status, size, len(attempts), d.body["attempts_order"])
	}
	var got []string
	for _, a := range attempts {
		got = append(got, a.(map[string]any)["id"].(string))
	}
	cursor, _ := d.body["attempts_next_cursor"].(string)
	pages, biggest, delivery := 0, size, size
	for cursor != "" {
		size, p := f.lambdaSize(t, get(f.keyA, "/v1/deliveries/"+dlv+"/attempts", map[string]string{"limit": "100", "cursor": cursor}))
		data, _ := p.body["data"].([]any)
		if p.status != 200 || len(data) == 0 || len(data) > 100 {
			t.Fatalf("page %d: %d, %d attempts: %.300s", pages, p.status, len(data), p.raw)
		}
		for _, a := range data {
			got = append(got, a.(map[string]any)["id"].(string))
		}
		biggest, pages = max(biggest, size), pages+1
		cursor, _ = p.body["next_cursor"].(string)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("paged through %d attempts (%d pages); want all %d, newest first, once each", len(got), pages, n)
	}
	if biggest > limit {
		t.Errorf("the biggest answer is %d bytes", biggest)
	}
	t.Logf("%d attempts: the delivery (%d bytes) and %d pages of 100, the biggest answer %d bytes (Lambda's limit: 6 MB)", n, delivery, pages, biggest)

	// The first page of the attempts route is the delivery's newest attempts.
	first := f.doRequest(t, get(f.keyA, "/v1/deliveries/"+dlv+"/attempts", map[string]string{"limit": "3"}))
	if data, _ := first.body["data"].([]any); len(data) != 3 || data[0].(map[string]any)["id"] != ids[0] || first.body["next_cursor"] == "" {
		t.Errorf("first page: %.300s", first.raw)
	}
	for name, q := range map[string]map[string]string{
		"limit 0": {"limit": "0"}, "limit 101": {"limit": "101"}, "limit x": {"limit": "x"},
		"a delivery cursor": {"cursor": "ZGx2XzAxTThOSEZGVlNYUlk0WFBIUDlBRVQwVldK"}, "garbage cursor": {"cursor": "!!"},
	} {
		if r := f.doRequest(t, get(f.keyA, "/v1/deliveries/"+dlv+"/attempts", q)); r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	if r := f.doRequest(t, get(f.keyB, "/v1/deliveries/"+dlv+"/attempts", nil)); r.status != 404 {
		t.Errorf("another account: %d", r.status)
	}
	if r := f.doRequest(t, get(f.keyA, "/v1/deliveries/dlv_01M8NHFFVSXRY4XPHP9AET0VWJ/attempts", nil)); r.status != 404 {
		t.Errorf("no such delivery: %d", r.status)
	}
	_, token, _ := f.session(t, f.keyA, `{"read_only":true}`)
	if r := f.doRequest(t, get(token, "/v1/deliveries/"+dlv+"/attempts", nil)); r.status != 200 {
		t.Errorf("a read-only portal session: %d %s", r.status, r.raw)
	}
}

// GET /v1/events/{id} reads only what it shows: each delivery's newest 10
// attempts, one query, however long its log (1,050 attempts read 333 read
// units), and a cursor pages through the older ones.
func TestEventViewReadsOnlyTheAttemptsItShows(t *testing.T) {
	f := newFixture(t, nil)
	f.endpoint(t, f.keyA)
	ev := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`)
	if ev.status != 202 {
		t.Fatalf("event: %d %s", ev.status, ev.raw)
	}
	evID := ev.body["id"].(string)
	dlv := ev.body["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	ids := f.writeAttempts(t, dlv, 1050)
	slices.Sort(ids)

	f.calls.Reset()
	got := f.do(t, f.keyA, "GET", "/v1/events/"+evID, "")
	if got.status != 200 {
		t.Fatalf("GET event: %d %.300s", got.status, got.raw)
	}
	// The event (1 unit strongly consistent for up to 4 KB, its body is
	// small) and 12 attempts of ~1.2 KB (about 4 units): far under what
	// reading the whole log costs.
	if units := f.calls.ReadUnits(); units > 10 {
		t.Errorf("GET /v1/events/{id} with 1,050 attempts read %.1f units: %s", units, f.calls.String())
	} else {
		t.Logf("GET /v1/events/{id} with 1,050 attempts: %.1f read units", units)
	}
	d := got.body["deliveries"].([]any)[0].(map[string]any)
	attempts, _ := d["attempts"].([]any)
	var shown []string
	for _, a := range attempts {
		shown = append(shown, a.(map[string]any)["id"].(string))
	}
	if !slices.Equal(shown, ids[len(ids)-10:]) {
		t.Fatalf("shows %d attempts; want the newest 10, oldest first", len(shown))
	}
	cursor, _ := d["attempts_next_cursor"].(string)
	if cursor == "" {
		t.Fatalf("no cursor to the older attempts: %.300s", got.raw)
	}
	page := f.doRequest(t, get(f.keyA, "/v1/deliveries/"+dlv+"/attempts", map[string]string{"limit": "1", "cursor": cursor}))
	if data, _ := page.body["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != ids[len(ids)-11] {
		t.Errorf("the cursor's first page: %.300s", page.raw)
	}
}
