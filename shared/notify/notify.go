// Package notify tells an account about its own endpoints: when one starts
// failing, is about to be disabled, is disabled by us (failing too long) or
// by its receiver (410), or recovers, a system event (endpoint.failing,
// endpoint.disabling, endpoint.disabled, endpoint.recovered) is sent through the account's own pipeline to its
// notification endpoint (an endpoint whose filter names these types):
// stored, signed, retried and in the log like any event. It rides on the
// operational events (package opevents), which are stated only when an
// endpoint's state changes, so it costs nothing on an ordinary attempt.
// At most one notice of a kind per endpoint per UTC day.
package notify

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/opevents"
)

// Ingest accepts a system event (ingest.Service.Notify).
type Ingest interface {
	Notify(ctx context.Context, accountID, about string, body []byte, key string) (sent bool, err error)
}

// Notifier is an opevents.Publisher: it hands every event to Next (the
// operators' bus or log) and turns the account-facing ones into notices.
type Notifier struct {
	Next   opevents.Publisher
	Ingest Ingest
	// DisableAfter is ENDPOINT_DISABLE_AFTER, to say when a failing
	// endpoint will be disabled (0: never).
	DisableAfter time.Duration
	// PortalURL is the portal's address (PORTAL_URL), for a link; "" none.
	PortalURL string
	// Mail, when set, also mails each notice to the account's contacts
	// (package notifymail); nil: no email.
	Mail Mailer
	Log  *slog.Logger
}

// Mailer sends a notice by email, at most once per notice key. Its errors
// name no address.
type Mailer interface {
	Send(ctx context.Context, n Notice) error
}

// Publish passes events on and sends the notices they make. A notice that
// could not be sent is logged; it never fails the caller.
func (n *Notifier) Publish(ctx context.Context, events ...opevents.Event) {
	if n.Next != nil {
		n.Next.Publish(ctx, events...)
	}
	for _, e := range events {
		notice, ok := For(e, n.DisableAfter, n.PortalURL)
		if !ok {
			continue
		}
		body, err := json.Marshal(notice.Body)
		if err != nil {
			continue
		}
		if _, err := n.Ingest.Notify(ctx, notice.AccountID, notice.EndpointID, body, notice.Key); err != nil {
			n.Log.WarnContext(ctx, "notice not sent", "account_id", notice.AccountID, "endpoint_id", notice.EndpointID,
				"event_type", notice.Body.Event, "error", err)
		}
		if n.Mail == nil {
			continue
		}
		if err := n.Mail.Send(ctx, notice); err != nil {
			n.Log.WarnContext(ctx, "notice mail not sent", "account_id", notice.AccountID, "endpoint_id", notice.EndpointID,
				"event_type", notice.Body.Event, "error", err)
		}
	}
}

// Notice is one system event for an account about one of its endpoints.
type Notice struct {
	AccountID, EndpointID string
	Key                   string // its idempotency key: its kind, endpoint and UTC day
	Body                  Body
}

// Body is a system event's body, as the notification endpoint receives it.
type Body struct {
	Event        string    `json:"event"` // endpoint.failing, .disabling, .disabled or .recovered
	Endpoint     Endpoint  `json:"endpoint"`
	Message      string    `json:"message"` // one sentence for a human
	FailingSince string    `json:"failing_since,omitempty"`
	LastStatus   int       `json:"last_status,omitempty"`
	LastError    string    `json:"last_error,omitempty"`
	DisablesAt   string    `json:"disables_at,omitempty"` // failing, disabling: when it will be disabled if it keeps failing
	DisabledAt   string    `json:"disabled_at,omitempty"`
	Reason       string    `json:"reason,omitempty"` // disabled: why
	RecoveredAt  string    `json:"recovered_at,omitempty"`
	Recover      *Call     `json:"recover,omitempty"` // the call that sends the missed events again
	Enable       *Call     `json:"enable,omitempty"`  // disabled: the call that enables it again
	PortalURL    string    `json:"portal_url,omitempty"`
	At           time.Time `json:"at"`
}

// Endpoint names the endpoint a notice is about.
type Endpoint struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Call is an API call the customer can make, as method, path and body.
type Call struct {
	Method string         `json:"method"`
	Path   string         `json:"path"`
	Body   map[string]any `json:"body,omitempty"`
}

// For is the notice an operational event makes for its account, if any:
// endpoint.failing, endpoint.disabling, endpoint.recovered, and
// endpoint.disabled by us or by its receiver (not by its owner, who knows).
func For(e opevents.Event, disableAfter time.Duration, portalURL string) (Notice, bool) {
	var n Notice
	switch d := e.Detail.(type) {
	case opevents.EndpointFailingDetail:
		n = Notice{AccountID: d.AccountID, EndpointID: d.EndpointID, Body: Body{
			Event: domain.SystemEndpointFailing, Endpoint: Endpoint{d.EndpointID, d.URL}, FailingSince: d.FailingSince,
			LastStatus: d.LastStatus, LastError: d.LastError,
			Message: "Deliveries to this endpoint are failing. They are retried for about 78 minutes; " +
				"deliveries still failing then are dead-lettered and can be sent again with the recover call once the endpoint answers.",
			Recover: recoverCall(d.EndpointID, d.FailingSince, ""),
		}}
		if disableAfter > 0 {
			n.Body.DisablesAt = e.At.Add(disableAfter).UTC().Format(time.RFC3339)
		}
	case opevents.EndpointDisablingDetail:
		n = Notice{AccountID: d.AccountID, EndpointID: d.EndpointID, Body: Body{
			Event: domain.SystemEndpointDisabling, Endpoint: Endpoint{d.EndpointID, d.URL}, FailingSince: d.FailingSince,
			LastStatus: d.LastStatus, LastError: d.LastError, DisablesAt: d.DisablesAt,
			Message: "This endpoint has been failing without a success and will be disabled at disables_at if it is still failing then. " +
				"Fix the receiver; once it answers, send the missed events again with the recover call.",
			Recover: recoverCall(d.EndpointID, d.FailingSince, ""),
		}}
	case opevents.EndpointDisabledDetail:
		if d.By == opevents.ByAPI {
			return Notice{}, false
		}
		n = Notice{AccountID: d.AccountID, EndpointID: d.EndpointID, Body: Body{
			Event: domain.SystemEndpointDisabled, Endpoint: Endpoint{d.EndpointID, d.URL}, DisabledAt: d.DisabledAt, Reason: d.Reason,
			Message: "This endpoint is disabled and receives nothing: enable it, then recover what it missed.",
			Enable:  &Call{Method: "PATCH", Path: "/v1/endpoints/" + d.EndpointID, Body: map[string]any{"disabled": false}},
			Recover: recoverCall(d.EndpointID, e.At.Add(-domain.DefaultRetention).UTC().Format(time.RFC3339), ""),
		}}
	case opevents.EndpointRecoveredDetail:
		n = Notice{AccountID: d.AccountID, EndpointID: d.EndpointID, Body: Body{
			Event: domain.SystemEndpointRecovered, Endpoint: Endpoint{d.EndpointID, d.URL}, FailingSince: d.FailingSince, RecoveredAt: d.RecoveredAt,
			Message: "This endpoint answers again. Deliveries that failed meanwhile can be sent again with the recover call.",
			Recover: recoverCall(d.EndpointID, d.FailingSince, d.RecoveredAt),
		}}
	default:
		return Notice{}, false
	}
	n.Body.At = e.At.UTC()
	n.Key = "notify:" + n.Body.Event + ":" + n.EndpointID + ":" + e.At.UTC().Format(time.DateOnly)
	if portalURL != "" {
		n.Body.PortalURL = portalURL + "#/endpoints/" + n.EndpointID
	}
	return n, true
}

// recoverCall is POST /v1/endpoints/{id}/recover for the window since ..
// until (until empty: up to the call).
func recoverCall(endpointID, since, until string) *Call {
	body := map[string]any{"since": since}
	if until != "" {
		body["until"] = until
	}
	return &Call{Method: "POST", Path: "/v1/endpoints/" + endpointID + "/recover", Body: body}
}
