package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gifq/webhooks/shared/ingest"
)

// maxBatchBody bounds POST /v1/events/batch: Lambda takes at most 6 MB of
// request in one synchronous invoke (headers and the event envelope
// included), so 100 events of 256 KiB do not fit in one batch.
const maxBatchBody = 5 << 20

// maxEscapedBatchBody bounds the body as it travels inside the Lambda
// event: API Gateway puts it in a JSON string, where every quote and
// backslash takes two bytes and a control character up to six, and
// Lambda's 6 MiB limit applies to that event. 64 KiB are left for the rest
// of the event (headers twice, as headers and multiValueHeaders, and the
// request context). A quote-heavy 5 MiB batch can escape to over 9 MiB.
const maxEscapedBatchBody = 6<<20 - 64<<10

// escapedLen is how many bytes body takes inside a JSON string (without
// the quotes around it), as a JSON encoder writes it: \" and \\ for a
// quote and a backslash, \n-style or \u00XX for control characters.
func escapedLen(body []byte) int {
	n := len(body)
	for _, c := range body {
		switch {
		case c == '"' || c == '\\':
			n++
		case c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// batchTooLarge answers 413 for a batch over either bound. The escaped
// bound is what a batch would meet on AWS, where a body over it never
// reaches the function; checking it here refuses the same batches the
// same way everywhere (make dev has no API Gateway in front).
func batchTooLarge(body []byte) (response, bool) {
	if len(body) > maxBatchBody {
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", "a batch is at most 5 MiB; send fewer events per batch"), true
	}
	if n := escapedLen(body); n > maxEscapedBatchBody {
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf(
			"this batch takes %d bytes once JSON-escaped into the Lambda event (quotes and backslashes count twice), "+
				"over the %d that fit in Lambda's 6 MiB; send fewer events per batch", n, maxEscapedBatchBody)), true
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
				`events[%d] must be {"body": <the event>, "idempotency_key"?: "<string>"} and nothing else`, i))
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
		default:
			return ingest.Item{}, false
		}
	}
	_, hasBody := fields["body"]
	return it, hasBody
}
