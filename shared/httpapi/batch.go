package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gifq/webhooks/shared/ingest"
)

// maxBatchBody bounds POST /v1/events/batch so that every batch within it
// reaches the function on AWS, however it is written. API Gateway (REST,
// and an HTTP API's payload 1.0 alike) hands the body to Lambda inside a
// JSON string, where a byte takes up to 6 (a control character as \u00XX;
// a quote or a backslash 2; base64, for a binary body, 4/3), and Lambda
// refuses a request over 6 MiB before the function runs: the client gets
// API Gateway's error, never our 413. So the bound is the worst case:
// 999,999 x 6 = 5,999,994 bytes, plus 64 KiB for the rest of the event
// (headers twice, the request context), stays under 6,291,456
// (TestWorstBatchFitsLambdasRequest builds that event). docs/decisions.md
// says why not a limit at API Gateway.
const maxBatchBody = 999_999

// batchTooLarge answers 413 for a batch over maxBatchBody (one that still
// reaches the function: up to ~6 MiB of plain text on AWS, any size in
// make dev).
func batchTooLarge(body []byte) (response, bool) {
	if len(body) > maxBatchBody {
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf(
			"a batch is at most %d bytes (what fits Lambda's 6 MiB request however API Gateway escapes it); send fewer events per batch", maxBatchBody)), true
	}
	return response{}, false
}

type batchResult struct {
	Index    int            `json:"index"`
	Status   int            `json:"status"`
	Replayed bool           `json:"replayed,omitempty"`
	Event    *acceptedEvent `json:"event,omitempty"`
	Error    *errorDetail   `json:"error,omitempty"`
}

type errorDetail struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Pointer *string `json:"pointer,omitempty"` // a schema's refusal (event_types.go)
}

type batchAnswer struct {
	Accepted int           `json:"accepted"`
	Refused  int           `json:"refused"`
	Results  []batchResult `json:"results"`
}

// postEventBatch accepts up to 100 events, each on its own: the answer is
// 200 with one result per event, in order, each with the status and body
// (or error) the single route would have answered for it.
func (a *API) postEventBatch(ctx context.Context, req *request) response {
	if r, tooLarge := batchTooLarge(req.body); tooLarge {
		return r
	}
	var in struct {
		Events []json.RawMessage `json:"events"`
	}
	if r, failed := decodeStrict(req.body, &in, `the body is not {"events":[{"body":{...},"idempotency_key":"..."}]}: `); failed {
		return r
	}
	if len(in.Events) == 0 || len(in.Events) > ingest.MaxBatch {
		return fail(http.StatusUnprocessableEntity, "invalid_batch", fmt.Sprintf("events must hold 1 to %d events", ingest.MaxBatch))
	}
	items := make([]ingest.Item, len(in.Events))
	for i, raw := range in.Events {
		var ok bool
		if items[i], ok = batchItem(raw); !ok {
			return fail(http.StatusBadRequest, "invalid_json", fmt.Sprintf(
				`events[%d] must be {"body": <the event>, "idempotency_key"?: "<string>", "ordering_key"?: "<string>"} and nothing else`, i))
		}
	}
	// The key's ingest limit counts every event of the batch (ingestlimit.go).
	gated, r, admitted := a.gated(ctx, req, len(items))
	if !admitted {
		return r
	}
	results, err := a.Ingest.IngestBatch(gated, req.account, items)
	if err != nil {
		return a.ingestError(ctx, err) // the key's limit, checked inside ingest, or our side failed
	}
	out := batchAnswer{Results: make([]batchResult, len(results))}
	for i, res := range results {
		r := batchResult{Index: i}
		if res.Err != nil {
			e := a.ingestError(ctx, res.Err)
			body := e.body.(errorBody).Error
			r.Status, r.Error = e.status, &errorDetail{Code: body.Code, Message: body.Message, Pointer: body.Pointer}
			out.Refused++
		} else {
			v := viewAccepted(res.Result)
			r.Status, r.Event, r.Replayed = http.StatusAccepted, &v, res.Replayed
			out.Accepted++
		}
		out.Results[i] = r
	}
	return ok(http.StatusOK, out)
}

// batchItem reads one entry of a batch. Its body is kept as sent (any value:
// one that is not an event is refused in its own result); the envelope
// around it must be exact.
func batchItem(raw json.RawMessage) (ingest.Item, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return ingest.Item{}, false
	}
	var it ingest.Item
	for k, v := range fields {
		switch k {
		case "body":
			it.Body = v // the bytes as sent, byte for byte
		case "idempotency_key":
			if string(v) == "null" || json.Unmarshal(v, &it.IdempotencyKey) != nil {
				return ingest.Item{}, false
			}
		case "ordering_key":
			if string(v) == "null" || json.Unmarshal(v, &it.OrderingKey) != nil {
				return ingest.Item{}, false
			}
		default:
			return ingest.Item{}, false
		}
	}
	_, hasBody := fields["body"]
	return it, hasBody
}
