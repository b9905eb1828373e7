// Package opevents publishes operational events: facts about an account's
// endpoints and deliveries that its operators route to alerts (an endpoint
// disabled, a delivery dead-lettered, a breaker opened or closed, a secret
// rotated). They go to the stack's own EventBridge bus (Bus) or, where there
// is none (make dev), to a log as JSON lines (Log). Publishing is best
// effort: a failure is logged and counted, never returned, so that no
// delivery or API call fails because an alert could not be sent.
// The schema of each detail-type is in docs/operational-events.md.
package opevents

import (
	"context"
	"sync"
	"time"
)

// Source is every event's source on the bus; rules match on it.
const Source = "gifq.webhooks"

// Type is an event's detail-type.
type Type string

// The detail-types.
const (
	EndpointDisabled     Type = "endpoint.disabled"
	DeliveryDeadLettered Type = "delivery.dead_lettered"
	BreakerOpened        Type = "endpoint.breaker_opened"
	BreakerClosed        Type = "endpoint.breaker_closed"
	SecretRotated        Type = "endpoint.secret_rotated"
	EndpointFailing      Type = "endpoint.failing"
	EndpointDisabling    Type = "endpoint.disabling"
	EndpointRecovered    Type = "endpoint.recovered"
	EndpointCreated      Type = "endpoint.created"
	EndpointUpdated      Type = "endpoint.updated"
	EndpointDeleted      Type = "endpoint.deleted"
	EndpointAuthFailed   Type = "endpoint.auth_failed"
)

// Types lists the detail-types, in the order docs/operational-events.md has them.
var Types = []Type{EndpointDisabled, DeliveryDeadLettered, BreakerOpened, BreakerClosed, SecretRotated,
	EndpointFailing, EndpointDisabling, EndpointRecovered, EndpointCreated, EndpointUpdated, EndpointDeleted, EndpointAuthFailed}

// Event is one fact. Detail is the detail-type's struct below; its JSON is
// the event's detail on the bus.
type Event struct {
	Type   Type
	At     time.Time
	Detail any
}

// Publisher sends events. Implementations never fail the caller: a lost
// event is logged and counted by the publisher.
type Publisher interface {
	Publish(ctx context.Context, events ...Event)
}

// Nop publishes nothing (tests, and parts that have no publisher wired).
type Nop struct{}

// Publish does nothing.
func (Nop) Publish(context.Context, ...Event) {}

// Who disabled an endpoint (EndpointDisabledDetail.By).
const (
	ByAPI      = "api"      // its owner, PATCH disabled=true (API or portal)
	ByReceiver = "receiver" // the receiver answered 410 Gone
	ByFailures = "failures" // failing without a success for ENDPOINT_DISABLE_AFTER
)

// EndpointDisabledDetail is endpoint.disabled's detail.
type EndpointDisabledDetail struct {
	AccountID  string `json:"account_id"`
	EndpointID string `json:"endpoint_id"`
	URL        string `json:"url"`    // scheme, host and path only (obs.SafeURL)
	Reason     string `json:"reason"` // the endpoint's disabled_reason, as the API shows it
	By         string `json:"by"`     // api, receiver or failures
	DisabledAt string `json:"disabled_at"`
}

// DeliveryDeadLetteredDetail is delivery.dead_lettered's detail.
type DeliveryDeadLetteredDetail struct {
	AccountID  string `json:"account_id"`
	EndpointID string `json:"endpoint_id"`
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	Reason     string `json:"reason"` // the delivery's fail_reason (rejected, attempts_exhausted, ...)
	Attempts   int    `json:"attempts"`
	FailedAt   string `json:"failed_at"`
}

// BreakerOpenedDetail is endpoint.breaker_opened's detail.
type BreakerOpenedDetail struct {
	AccountID           string `json:"account_id"`
	EndpointID          string `json:"endpoint_id"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	OpenUntil           string `json:"open_until"` // when one probe may go
}

// BreakerClosedDetail is endpoint.breaker_closed's detail.
type BreakerClosedDetail struct {
	AccountID  string `json:"account_id"`
	EndpointID string `json:"endpoint_id"`
	ClosedAt   string `json:"closed_at"` // when the probe succeeded
}

// SecretRotatedDetail is endpoint.secret_rotated's detail. It never
// carries a secret.
type SecretRotatedDetail struct {
	AccountID               string `json:"account_id"`
	EndpointID              string `json:"endpoint_id"`
	RotatedAt               string `json:"rotated_at"`
	PreviousSecretExpiresAt string `json:"previous_secret_expires_at,omitempty"` // when the old secret stops signing
}

// EndpointFailingDetail is endpoint.failing's detail: the endpoint's first
// failure since its last success (the attempt that set failing_since).
type EndpointFailingDetail struct {
	AccountID    string `json:"account_id"`
	EndpointID   string `json:"endpoint_id"`
	URL          string `json:"url"` // scheme, host and path only (obs.SafeURL)
	FailingSince string `json:"failing_since"`
	LastStatus   int    `json:"last_status,omitempty"` // the failed attempt's HTTP status
	LastError    string `json:"last_error,omitempty"`  // or its error class, when there was no answer
}

// EndpointDisablingDetail is endpoint.disabling's detail: a failure within
// a day (lifecycle.DisableWarning) of the endpoint being disabled for
// failing; stated once per failing period (store.WarnDisabling).
type EndpointDisablingDetail struct {
	AccountID    string `json:"account_id"`
	EndpointID   string `json:"endpoint_id"`
	URL          string `json:"url"` // scheme, host and path only (obs.SafeURL)
	FailingSince string `json:"failing_since"`
	DisablesAt   string `json:"disables_at"`           // when the next failure disables it
	LastStatus   int    `json:"last_status,omitempty"` // the failed attempt's HTTP status
	LastError    string `json:"last_error,omitempty"`  // or its error class, when there was no answer
}

// EndpointAuthFailedDetail is endpoint.auth_failed's detail: the
// receiver's token endpoint refused the endpoint's OAuth2 client
// (invalid_client). It never carries a secret or a token.
type EndpointAuthFailedDetail struct {
	AccountID  string `json:"account_id"`
	EndpointID string `json:"endpoint_id"`
	DeliveryID string `json:"delivery_id"`
	Error      string `json:"error"` // the attempt's error class
	FailedAt   string `json:"failed_at"`
}

// EndpointRecoveredDetail is endpoint.recovered's detail: a success after
// failures (the attempt that cleared failing_since).
type EndpointRecoveredDetail struct {
	AccountID    string `json:"account_id"`
	EndpointID   string `json:"endpoint_id"`
	URL          string `json:"url"`           // scheme, host and path only (obs.SafeURL)
	FailingSince string `json:"failing_since"` // when the failures began
	RecoveredAt  string `json:"recovered_at"`
}

// EndpointChangedDetail is the detail of endpoint.created, endpoint.updated
// and endpoint.deleted. It never carries a secret or a header's value.
type EndpointChangedDetail struct {
	AccountID  string   `json:"account_id"`
	EndpointID string   `json:"endpoint_id"`
	URL        string   `json:"url"` // scheme, host and path only (obs.SafeURL)
	EventTypes []string `json:"event_types,omitempty"`
	Disabled   bool     `json:"disabled"`
	ChangedAt  string   `json:"changed_at"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func ms(v int64) string {
	if v == 0 {
		return ""
	}
	return stamp(time.UnixMilli(v))
}

// Recorder is a Publisher that keeps what it is given, in order: for the
// tests of what the API, the worker and the sweeper say, without a bus.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Publish keeps events.
func (r *Recorder) Publish(_ context.Context, events ...Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, events...)
}

// Events is what was published so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}
