package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/apiclient"
)

// client is the generated API client (shared/apiclient) for one test and
// key: the typed helpers (endpoint, publish, delivery) call the API through
// it, so their paths, methods and fields are the document's; every answer
// is also checked against the document, as h.call's are.
// With t nil (tryCall, while the process restarts) answers are not checked.
func (h *harness) client(t *testing.T, key string) *apiclient.ClientWithResponses {
	c, err := apiclient.NewClientWithResponses(h.api, apiclient.WithBearer(key),
		apiclient.WithHTTPClient(checkedDoer{h: h, t: t}))
	if err != nil {
		panic(err) // only a malformed base URL fails, and h.api is ours
	}
	return c
}

// checkedDoer sends a request and holds its answer to docs/openapi.yaml.
type checkedDoer struct {
	h *harness
	t *testing.T
}

func (d checkedDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	if d.t != nil {
		d.h.conforms(d.t, req, resp.StatusCode, resp.Header, raw)
	}
	return resp, nil
}

// headers sets extra request headers given as name, value pairs.
func headers(hdr []string) apiclient.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return nil
	}
}

func postEvent(c *apiclient.ClientWithResponses, body string, hdr ...string) (*apiclient.CreateEventResponse, error) {
	return c.CreateEventWithBodyWithResponse(ctx, nil, "application/json", strings.NewReader(body), headers(hdr))
}

func fromAccepted(e *apiclient.AcceptedEvent) eventOut {
	out := eventOut{ID: e.Id, Event: e.Event}
	for _, d := range e.Deliveries {
		out.Deliveries = append(out.Deliveries, struct {
			ID         string `json:"id"`
			EndpointID string `json:"endpoint_id"`
		}{d.Id, d.EndpointId})
	}
	return out
}

func fromDelivery(d *apiclient.DeliveryWithAttempts) deliveryOut {
	out := deliveryOut{ID: d.Id, EndpointID: d.EndpointId, Status: string(d.Status), AttemptCount: d.AttemptCount, Series: d.Series,
		LastStatus: deref(d.LastStatus), LastError: deref(d.LastError), FailReason: deref(d.FailReason)}
	if d.NextAttemptAt != nil {
		out.NextAttemptAt = d.NextAttemptAt.Format(time.RFC3339Nano)
	}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, attemptOut{Kind: string(a.Kind), Number: deref(a.Number), Series: a.Series,
			StatusCode: deref(a.StatusCode), ErrorClass: deref(a.ErrorClass), Outcome: a.Outcome, Response: deref(a.ResponseBody)})
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
