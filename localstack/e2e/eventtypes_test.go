package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/apiclient"
)

// The event catalog through the generated client and the whole pipeline:
// an event that passes its type's schema is delivered byte for byte, one
// that fails it is a 422 with the pointer and never reaches the receiver,
// a deprecated type still delivers, and endpoints subscribe by name.
// Every answer is held to docs/openapi.yaml (the client's checkedDoer and
// h.call).
func TestEventCatalogEndToEnd(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))
	c := h.client(t, key)

	var schema apiclient.JSONSchema = map[string]any{
		"type": "object", "required": []any{"event", "payout_type"},
		"properties": map[string]any{"payout_type": map[string]any{"enum": []any{"gift_cards", "crypto"}}},
	}
	example := apiclient.EventTypeExample{"event": "payout.fulfilled", "payout_type": "crypto"}
	desc := "A payout reached its recipient."
	created, err := c.CreateEventTypeWithResponse(ctx, apiclient.NewEventType{Name: "payout.fulfilled", Description: &desc, Schema: &schema, Example: &example})
	if err != nil || created.JSON201 == nil || created.JSON201.Name != "payout.fulfilled" {
		t.Fatalf("create: %v %s", err, created.Body)
	}
	var bad apiclient.JSONSchema = map[string]any{"$ref": "https://schemas.example.com/payout.json"}
	if r, err := c.CreateEventTypeWithResponse(ctx, apiclient.NewEventType{Name: "payout.remote", Schema: &bad}); err != nil || r.StatusCode() != 422 {
		t.Fatalf("a remote $ref: %v %d %s", err, r.StatusCode(), r.Body)
	}

	ev := h.publish(t, key, payout)
	if d := h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled); d.Status != "delivered" {
		t.Fatalf("a valid event: %+v", d)
	}
	var e struct {
		Error struct{ Code, Message, Pointer string }
	}
	if code := h.call(t, key, "POST", "/v1/events", `{"event":"payout.fulfilled","payout_type":"cheque"}`, &e); code != 422 ||
		e.Error.Code != "schema_mismatch" || e.Error.Pointer != "/payout_type" {
		t.Fatalf("an invalid event: %d %+v", code, e)
	}

	// Endpoints subscribe by name from now on.
	if code := h.call(t, key, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/x","event_types":["payout.sent"]}`, &e); code != 422 ||
		e.Error.Code != "unknown_event_types" || !strings.Contains(e.Error.Message, "payout.sent") {
		t.Fatalf("an unknown type: %d %+v", code, e)
	}
	h.endpoint(t, key, "http://127.0.0.1:1/y", "payout.fulfilled")

	// Deprecated: no new subscriptions, but it still validates and delivers.
	yes := true
	if r, err := c.UpdateEventTypeWithResponse(ctx, "payout.fulfilled", apiclient.EventTypePatch{Deprecated: &yes}); err != nil || r.JSON200 == nil || !r.JSON200.Deprecated {
		t.Fatalf("deprecate: %v %s", err, r.Body)
	}
	if code := h.call(t, key, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/z","event_types":["payout.fulfilled"]}`, &e); code != 422 {
		t.Fatalf("subscribing to a deprecated type: %d %+v", code, e)
	}
	ev2 := h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"gift_cards"}`)
	for _, d := range ev2.Deliveries {
		if d.EndpointID == ev.Deliveries[0].EndpointID {
			if got := h.waitFor(t, key, d.ID, 15*time.Second, settled); got.Status != "delivered" {
				t.Fatalf("a deprecated type's event: %+v", got)
			}
		}
	}
	got := rv.requests()
	if len(got) != 2 || string(got[0].body) != payout || got[1].verified != nil {
		t.Fatalf("the receiver got %d requests; only the two valid events, byte for byte and signed", len(got))
	}

	list, err := c.ListEventTypesWithResponse(ctx, &apiclient.ListEventTypesParams{})
	if err != nil || list.JSON200 == nil || len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Example == nil {
		t.Fatalf("list: %v %s", err, list.Body)
	}
	one, err := c.GetEventTypeWithResponse(ctx, "payout.fulfilled")
	if err != nil || one.JSON200 == nil || one.JSON200.Schema == nil {
		t.Fatalf("get: %v %s", err, one.Body)
	}
}
