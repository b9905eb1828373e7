package domain

import (
	"crypto/ed25519"
	"strings"
	"time"
)

// Limits of the contract.
const (
	MaxBodyBytes          = 256 << 10 // an event body, stored and delivered byte for byte
	MaxEndpoints          = 16        // per account
	MaxResponseBytes      = 1024      // of a receiver's response kept in the attempt log
	MaxEventTypeLength    = 200
	MaxEventTypesFilter   = 64
	MaxDescriptionLength  = 500
	MaxURLLength          = 2048
	DefaultRetention      = 30 * 24 * time.Hour
	IdempotencyWindow     = 24 * time.Hour
	MaxIdempotencyKeySize = 255
	MaxOrderingKeySize    = 128
)

// EventTypePattern is an event type (unanchored): a letter or digit, then
// up to MaxEventTypeLength-1 more of letters, digits and . _ : / -. Ingest
// checks events against it and the API endpoint filters.
const EventTypePattern = `[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}`

// Status is where a delivery stands.
type Status string

// Delivery statuses.
const (
	StatusPending   Status = "pending"
	StatusDelivered Status = "delivered"
	StatusFailed    Status = "failed"
)

// FailReason is why a delivery failed for good (the DLQ message carries
// the same word).
type FailReason string

// The failure reasons.
const (
	ReasonRejected         FailReason = "rejected"           // a 3xx or 4xx answer
	ReasonExhausted        FailReason = "attempts_exhausted" // 8 attempts without a 2xx
	ReasonEndpointDisabled FailReason = "endpoint_disabled"
	ReasonEndpointDeleted  FailReason = "endpoint_deleted"
	ReasonBlockedAddress   FailReason = "blocked_address" // the endpoint resolved to a forbidden address at dial time
	ReasonEventExpired     FailReason = "event_expired"
	// The endpoint's breaker held the delivery past the time its retry
	// schedule would have ended (lifecycle.Deadline).
	ReasonEndpointUnavailable FailReason = "endpoint_unavailable"
)

// AttemptKind says who made an attempt.
type AttemptKind string

// Attempt kinds.
const (
	AttemptAuto        AttemptKind = "auto"
	AttemptManual      AttemptKind = "manual"
	AttemptInterrupted AttemptKind = "interrupted" // claimed by a worker that died before recording it
)

// AttemptOutcome is the word the attempt log shows for an attempt.
type AttemptOutcome string

// The attempt outcomes.
const (
	OutcomeDelivered  AttemptOutcome = "delivered"
	OutcomeRetry      AttemptOutcome = "retry"
	OutcomeRejected   AttemptOutcome = "rejected"
	OutcomeThrottled  AttemptOutcome = "throttled"
	OutcomeInProgress AttemptOutcome = "in_progress" // a manual attempt claimed and not yet recorded
	OutcomeUnknown    AttemptOutcome = "unknown"     // interrupted: the worker stopped before recording a result
)

// Account owns API keys and endpoints.
type Account struct {
	ID            string  `dynamodbav:"id"`
	Name          string  `dynamodbav:"name"`
	RatePerSecond float64 `dynamodbav:"rate_per_second,omitempty"` // 0: the deployment default
	EndpointCount int     `dynamodbav:"endpoint_count"`
	CreatedAt     int64   `dynamodbav:"created_at"`
	// The event catalog (eventtype.go): how many types it has (0: no
	// catalog, every event type goes) and a number every change to it raises,
	// so that ingest knows from this item alone whether its cached schemas
	// still hold.
	EventTypeCount int   `dynamodbav:"event_type_count,omitempty"`
	CatalogVersion int64 `dynamodbav:"catalog_version,omitempty"`
	// AWSExternalID is the sts:ExternalId we pass when assuming this
	// account's roles (AWS destinations); made on first use, never changed,
	// shown only to the account (GET /v1/account).
	AWSExternalID string `dynamodbav:"aws_external_id,omitempty"`
	// NotificationEmails are the addresses told by email (package
	// notifymail) when one of its endpoints fails, is disabled or
	// recovers (PUT /v1/account/notifications). Personal data: never
	// logged in full, never in operational events.
	NotificationEmails []string `dynamodbav:"notification_emails,omitempty"`
}

// APIKey is what a producer's bearer key resolves to. Only its hash is stored.
type APIKey struct {
	ID        string `dynamodbav:"id"`
	AccountID string `dynamodbav:"account_id"`
	Prefix    string `dynamodbav:"prefix"` // the first characters, to tell keys apart
	CreatedAt int64  `dynamodbav:"created_at"`
	RevokedAt int64  `dynamodbav:"revoked_at,omitempty"`
}

// Secret is one signing secret of an endpoint. During a rotation the old
// secret has ExpiresAt set and keeps signing until then.
//
// In the table a secret is Sealed (package envelope, under the KMS key) and
// Value is empty; the store fills Value when it reads the endpoint. Items
// written before sealing have Value only; the store seals them on their next
// write (store.sealSecrets).
type Secret struct {
	Value     string `dynamodbav:"value,omitempty"`
	Sealed    []byte `dynamodbav:"sealed,omitempty"`
	CreatedAt int64  `dynamodbav:"created_at"`
	ExpiresAt int64  `dynamodbav:"expires_at,omitempty"`
}

// Endpoint is a receiver's URL with its filter and secrets.
type Endpoint struct {
	ID             string   `dynamodbav:"id"`
	AccountID      string   `dynamodbav:"account_id"`
	URL            string   `dynamodbav:"url"`
	Description    string   `dynamodbav:"description,omitempty"`
	EventTypes     []string `dynamodbav:"event_types,omitempty"` // empty: every event
	Disabled       bool     `dynamodbav:"disabled"`
	DisabledReason string   `dynamodbav:"disabled_reason,omitempty"`
	Secrets        []Secret `dynamodbav:"secrets"` // newest first
	// SignatureScheme is what webhook-signature carries: SchemeV1 (HMAC,
	// the default, also when empty), SchemeV1a (ed25519) or SchemeBoth.
	SignatureScheme SignatureScheme `dynamodbav:"signature_scheme,omitempty"`
	// SigningKeys are the account's v1a keys, private parts opened, filled
	// by the store when it reads an endpoint of a v1a scheme for an attempt.
	SigningKeys []SigningKey `dynamodbav:"-"`
	CreatedAt   int64        `dynamodbav:"created_at"`
	UpdatedAt   int64        `dynamodbav:"updated_at"`
	// Leases are the in-flight attempts to this endpoint: slot -> lease.
	Leases map[string]Lease `dynamodbav:"leases"`
	// SlowUntil: marked slow until then (unix ms; on its slot item), so its
	// attempts take in-flight slots under ENDPOINT_CAP=whenSlow.
	SlowUntil int64 `dynamodbav:"-"`
	// FailingSince is the time of the first failure since the last success.
	FailingSince int64 `dynamodbav:"failing_since,omitempty"`
	// DisableWarnedAt is when the account was told this failing period
	// will soon disable the endpoint (endpoint.disabling); removed with
	// failing_since.
	DisableWarnedAt int64 `dynamodbav:"disable_warned_at,omitempty"`
	// AuthFailingSince is the time the destination's auth server first
	// refused the endpoint's credentials since the last success
	// (destination.AuthRefused): endpoint.auth_failed is raised once, when
	// it is set.
	AuthFailingSince int64 `dynamodbav:"auth_failing_since,omitempty"`
	// The last failed attempt (unix ms; its HTTP status, or its error
	// class when there was no answer), written at most once a minute
	// (store.LastFailureEvery): the endpoint's health view.
	LastFailureAt     int64  `dynamodbav:"last_failure_at,omitempty"`
	LastFailureStatus int    `dynamodbav:"last_failure_status,omitempty"`
	LastFailureError  string `dynamodbav:"last_failure_error,omitempty"`
	// PausedUntil is set from a receiver's Retry-After.
	PausedUntil int64 `dynamodbav:"paused_until,omitempty"`
	// The circuit breaker (lifecycle.BreakerOf): consecutive timeouts or
	// connection failures; open until (unix ms), with its last pause; a
	// probe held until (unix ms).
	BreakerFails      int   `dynamodbav:"breaker_fails,omitempty"`
	BreakerOpenUntil  int64 `dynamodbav:"breaker_open_until,omitempty"`
	BreakerPauseMs    int64 `dynamodbav:"breaker_pause_ms,omitempty"`
	BreakerProbeUntil int64 `dynamodbav:"breaker_probe_until,omitempty"`
	// Settings are the endpoint's own rate, timeout and headers as its
	// owner set them; only endpointcfg.Resolve reads them.
	Settings EndpointSettings `dynamodbav:"settings"`
	// Destination is where an AWS endpoint delivers (destination.go); nil:
	// an HTTP endpoint, its URL.
	Destination *Destination `dynamodbav:"destination,omitempty"`
	// Route changes, to a new random id, whenever the endpoint is disabled,
	// deleted, re-pointed (URL or destination) or its secret rotated, on
	// the endpoint's slot item too, in one transaction: a worker takes an
	// in-flight slot only for the route it read (store.SlotTake.Route), so
	// what it read, strongly or not, is what it signs and sends with.
	// Empty until the first such change.
	Route string `dynamodbav:"route,omitempty"`
	// A polling endpoint's (DestinationPolling) token, as its SHA-256 only,
	// and the position its consumer committed (an event id; "" none yet).
	PollTokenHash []byte `dynamodbav:"poll_token_hash,omitempty"`
	PollPosition  string `dynamodbav:"poll_position,omitempty"`
}

// EndpointSettings are an endpoint's own delivery settings; a zero field
// means "the account's or the deployment's" (endpointcfg.Resolve).
type EndpointSettings struct {
	RatePerSecond  float64           `dynamodbav:"rate_per_second,omitempty"`
	TimeoutSeconds int               `dynamodbav:"timeout_seconds,omitempty"`
	Headers        map[string]string `dynamodbav:"headers,omitempty"` // write-only: the API shows them masked
	// SealedHeaders is Headers as the table keeps them where a KMS key is
	// configured (package store: sealed under the stack's envelope, Headers
	// then empty); the store opens them on read.
	SealedHeaders []byte `dynamodbav:"sealed_headers,omitempty"`
	// Ordered: keyed events reach the endpoint one at a time per key, in
	// their sequence (lifecycle.Hold).
	Ordered bool `dynamodbav:"ordered,omitempty"`
	// OAuth2 is the client credentials the sender gets a bearer token with
	// before each POST; nil: none.
	OAuth2 *OAuth2 `dynamodbav:"oauth2,omitempty"`
	// TLS is the client certificate the sender presents to the receiver
	// and the CA bundle it trusts for it; nil: neither.
	TLS *ClientTLS `dynamodbav:"tls,omitempty"`
	// Filter is the endpoint's content filter (package filter), compact
	// JSON; empty: every event it subscribes to.
	Filter string `dynamodbav:"filter,omitempty"`
}

// ClientTLS is an endpoint's mutual TLS: a client certificate and key (PEM)
// and an optional CA bundle (PEM) for a receiver with a private certificate.
type ClientTLS struct {
	CertPEM string `dynamodbav:"cert,omitempty"`
	// KeyPEM is write-only; where a KMS key is configured the table keeps it
	// only as SealedKey (package store opens it on read).
	KeyPEM    string `dynamodbav:"key,omitempty"`
	SealedKey []byte `dynamodbav:"sealed_key,omitempty"`
	CABundle  string `dynamodbav:"ca_bundle,omitempty"`
}

// OAuth2 is an endpoint's OAuth 2.0 client credentials grant (RFC 6749
// 4.4) to its receiver's token endpoint.
type OAuth2 struct {
	TokenURL string `dynamodbav:"token_url"`
	ClientID string `dynamodbav:"client_id"`
	// ClientSecret is write-only; where a KMS key is configured the table
	// keeps it only as SealedClientSecret (package store opens it on read).
	ClientSecret       string   `dynamodbav:"client_secret,omitempty"`
	SealedClientSecret []byte   `dynamodbav:"sealed_client_secret,omitempty"`
	Scopes             []string `dynamodbav:"scopes,omitempty"`
	Audience           string   `dynamodbav:"audience,omitempty"`
	// AuthMethod: "client_secret_basic" (the default), "client_secret_post"
	// or "private_key_jwt".
	AuthMethod string `dynamodbav:"auth_method,omitempty"`
	// PrivateKey (PEM) signs private_key_jwt's client assertions; write-only
	// and, like ClientSecret, kept only as SealedPrivateKey where a KMS key
	// is configured.
	PrivateKey       string `dynamodbav:"private_key,omitempty"`
	SealedPrivateKey []byte `dynamodbav:"sealed_private_key,omitempty"`
}

// Lease holds one of an endpoint's in-flight slots until Until (unix ms).
type Lease struct {
	Until int64  `dynamodbav:"u"`
	Claim string `dynamodbav:"c"`
}

// Subscribes reports whether the endpoint wants events named eventType.
// A filter entry "payout.*" matches every event type starting "payout.".
// A system event (IsSystemEvent) goes only to an endpoint that names it.
func (e *Endpoint) Subscribes(eventType string) bool {
	if IsSystemEvent(eventType) {
		return e.subscribesExplicitly(eventType)
	}
	if len(e.EventTypes) == 0 {
		return true
	}
	for _, f := range e.EventTypes {
		if f == "*" || f == eventType {
			return true
		}
		if prefix, ok := strings.CutSuffix(f, "*"); ok && strings.HasPrefix(eventType, prefix) {
			return true
		}
	}
	return false
}

// SigningSecrets returns the secrets that sign a request at time now (unix ms):
// the current one and, during a rotation's grace period, the previous one;
// never more than MaxLiveSecrets, even for an endpoint rotated many times
// before rotations were capped (the newest ones sign).
func (e *Endpoint) SigningSecrets(now int64) []string {
	var out []string
	for _, s := range liveSecrets(e.Secrets, now) {
		if len(out) == MaxLiveSecrets {
			break
		}
		out = append(out, s.Value)
	}
	return out
}

// SignatureScheme is which Standard Webhooks signatures an endpoint gets.
// X-Gifq-Signature (HMAC) is on every request whatever the scheme.
type SignatureScheme string

// The signature schemes.
const (
	SchemeV1   SignatureScheme = "v1"   // HMAC-SHA256 with the endpoint's secret (default)
	SchemeV1a  SignatureScheme = "v1a"  // ed25519 with the account's signing key
	SchemeBoth SignatureScheme = "both" // v1 and v1a, for a receiver moving from one to the other
)

// ParseSignatureScheme reads a scheme; "" is the default, SchemeV1.
func ParseSignatureScheme(s string) (SignatureScheme, bool) {
	switch v := SignatureScheme(s); v {
	case "":
		return SchemeV1, true
	case SchemeV1, SchemeV1a, SchemeBoth:
		return v, true
	}
	return "", false
}

// SignsV1 says whether webhook-signature carries v1 (HMAC) entries.
func (e *Endpoint) SignsV1() bool { return e.SignatureScheme != SchemeV1a }

// SignsV1a says whether webhook-signature carries v1a (ed25519) entries.
func (e *Endpoint) SignsV1a() bool {
	return e.SignatureScheme == SchemeV1a || e.SignatureScheme == SchemeBoth
}

// Scheme is the endpoint's scheme, SchemeV1 when unset.
func (e *Endpoint) Scheme() SignatureScheme {
	if e.SignatureScheme == "" {
		return SchemeV1
	}
	return e.SignatureScheme
}

// V1aKeys are the private keys that sign a v1a request at now (unix ms):
// the account's current key and, during a rotation's overlap, the previous
// ones; none unless the endpoint's scheme has v1a.
func (e *Endpoint) V1aKeys(now int64) []ed25519.PrivateKey {
	if !e.SignsV1a() {
		return nil
	}
	var out []ed25519.PrivateKey
	for _, k := range e.SigningKeys {
		if k.Live(now) && k.Private != nil {
			out = append(out, k.Private)
		}
	}
	return out
}

// MaxLiveSigningKeys is how many v1a keys an account publishes and signs
// with at once: the current one and, during a rotation's overlap, the one
// it replaced.
const MaxLiveSigningKeys = 2

// SigningKey is one of an account's ed25519 keys (Standard Webhooks v1a).
// In the table the private key is only Sealed (package envelope); the
// store fills Private when a key is needed for signing.
type SigningKey struct {
	ID        string             `dynamodbav:"id"`     // the JWKS kid
	Public    []byte             `dynamodbav:"public"` // 32 bytes
	Sealed    []byte             `dynamodbav:"sealed"` // the private key's 32-byte seed, sealed
	Private   ed25519.PrivateKey `dynamodbav:"-"`
	CreatedAt int64              `dynamodbav:"created_at"`
	// RetiresAt is set when a newer key replaces this one: it stays
	// published, and keeps signing beside the new one, until then.
	RetiresAt int64 `dynamodbav:"retires_at,omitempty"`
}

// Live reports whether the key is published and signing at now (unix ms).
func (k SigningKey) Live(now int64) bool { return k.RetiresAt == 0 || k.RetiresAt > now }

// Event is what a producer posted: the body bytes exactly as received.
type Event struct {
	ID             string `dynamodbav:"id"`
	AccountID      string `dynamodbav:"account_id"`
	Type           string `dynamodbav:"event_type"`
	Body           []byte `dynamodbav:"body"`
	IdempotencyKey string `dynamodbav:"idempotency_key,omitempty"`
	// OrderingKey is the producer's Ordering-Key; Seq its place in the
	// (account, key) sequence, from 1 (0: no key).
	OrderingKey string   `dynamodbav:"ordering_key,omitempty"`
	Seq         int64    `dynamodbav:"seq,omitempty"`
	DeliveryIDs []string `dynamodbav:"delivery_ids"`
	// EndpointIDs are the endpoints it has a delivery to (at ingest, then
	// each replay's): replay sends it only to an endpoint not listed here.
	EndpointIDs []string `dynamodbav:"endpoint_ids,omitempty"`
	ReceivedAt  int64    `dynamodbav:"received_at"`
	ExpiresAt   int64    `dynamodbav:"ttl"` // unix seconds (DynamoDB TTL)
}

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID         string `dynamodbav:"id"`
	EventID    string `dynamodbav:"event_id"`
	EndpointID string `dynamodbav:"endpoint_id"`
	AccountID  string `dynamodbav:"account_id"`
	EventType  string `dynamodbav:"event_type"`
	Status     Status `dynamodbav:"status"`
	// Gen is bumped whenever a new queue message takes over the delivery
	// (sweeper re-queue, fresh series); messages of an older gen are dropped.
	Gen int `dynamodbav:"gen"`
	// Series counts fresh series of attempts (recover, redrive).
	Series int `dynamodbav:"series"`
	// SeriesAt is when the current series started (unix ms; absent for the
	// first series, which starts at CreatedAt): lifecycle.Deadline counts
	// from it.
	SeriesAt int64 `dynamodbav:"series_at,omitempty"`
	// Attempts counts automatic attempts started in the current series; an
	// attempt counts from its claim, so one lost to a crash is not repeated
	// past the ceiling.
	Attempts int `dynamodbav:"attempts"`
	// Throttles counts the free throttles (429 with Retry-After, no attempt
	// used) of the current series; capped by lifecycle.MaxFreeThrottles.
	Throttles     int   `dynamodbav:"throttles,omitempty"`
	NextAttemptAt int64 `dynamodbav:"next_attempt_at"`
	// DueAt is when the sweeper expects the delivery to move: it re-queues
	// pending deliveries overdue by its grace (a final one keeps its DueAt).
	DueAt int64 `dynamodbav:"due_at,omitempty"`
	// OverdueFrom is the due time the sweeper found the delivery overdue
	// at, kept through its re-queues (which move DueAt) until an attempt.
	OverdueFrom int64 `dynamodbav:"overdue_from,omitempty"`
	// PrevDelivery is the delivery of the same ordering key's previous
	// event to the same endpoint, set at ingest for an ordered endpoint
	// only: this one waits until that one is final (lifecycle.Hold).
	PrevDelivery string `dynamodbav:"prev_delivery,omitempty"`
	// RequeuedAt is when the sweeper last handed the delivery to a new
	// message (unix ms; absent if never): it waits a sweep period before
	// taking that message for lost too.
	RequeuedAt    int64      `dynamodbav:"requeued_at,omitempty"`
	LeaseUntil    int64      `dynamodbav:"lease_until,omitempty"`
	Claim         string     `dynamodbav:"claim,omitempty"`
	ClaimAttempt  string     `dynamodbav:"claim_attempt,omitempty"` // the attempt id the claim sends as X-Gifq-Delivery
	LastAttemptAt int64      `dynamodbav:"last_attempt_at,omitempty"`
	LastAttemptID string     `dynamodbav:"last_attempt_id,omitempty"` // the last recorded attempt: a retried record finds its own write here
	LastStatus    int        `dynamodbav:"last_status,omitempty"`
	LastMs        int64      `dynamodbav:"last_ms,omitempty"` // the last attempt's duration (package stats reads it from the stream)
	LastError     string     `dynamodbav:"last_error,omitempty"`
	FailReason    FailReason `dynamodbav:"fail_reason,omitempty"`
	DLQPending    bool       `dynamodbav:"dlq_pending,omitempty"`
	DLQClaimUntil int64      `dynamodbav:"dlq_claim_until,omitempty"` // who sends the DLQ message holds this until then
	CreatedAt     int64      `dynamodbav:"created_at"`
	UpdatedAt     int64      `dynamodbav:"updated_at"`
	DeliveredAt   int64      `dynamodbav:"delivered_at,omitempty"`
	FailedAt      int64      `dynamodbav:"failed_at,omitempty"`
	ExpiresAt     int64      `dynamodbav:"ttl"`
	// Logged holds the attempts logged on the delivery's own item, written
	// by the same write as their outcome while the item stays under 1 KB
	// (store.RecordAttempt); the others have items of their own. Stored
	// without their delivery id and expiry, which are the delivery's.
	Logged []Attempt `dynamodbav:"atts,omitempty"`
}

// NewDelivery is a new delivery id of an event (its id, type and expiry, in
// unix s) to an endpoint of the account, made at createdAt (unix ms):
// pending, due then, the first attempt of its first series. Ingest writes
// it so, and ingest's first message carries what rebuilds it
// (queue.Message.Delivery).
func NewDelivery(id, accountID, endpointID, eventID, eventType string, createdAt, expiresAt int64) Delivery {
	return Delivery{ID: id, EventID: eventID, EndpointID: endpointID, AccountID: accountID, EventType: eventType,
		Status: StatusPending, Gen: 1, Series: 1, NextAttemptAt: createdAt, CreatedAt: createdAt, UpdatedAt: createdAt, ExpiresAt: expiresAt}
}

// Attempt is one HTTP request to an endpoint and what came of it.
type Attempt struct {
	ID                string         `dynamodbav:"id"`
	DeliveryID        string         `dynamodbav:"delivery_id"`
	Kind              AttemptKind    `dynamodbav:"kind"`
	Series            int            `dynamodbav:"series"`
	Number            int            `dynamodbav:"number"` // 1..8 within the series; 0 for manual
	StartedAt         int64          `dynamodbav:"started_at"`
	DurationMs        int64          `dynamodbav:"duration_ms"`
	StatusCode        int            `dynamodbav:"status_code,omitempty"`
	ErrorClass        string         `dynamodbav:"error_class,omitempty"`
	Error             string         `dynamodbav:"error,omitempty"`
	ResponseBody      string         `dynamodbav:"response_body,omitempty"`
	ResponseTruncated bool           `dynamodbav:"response_truncated,omitempty"`
	Outcome           AttemptOutcome `dynamodbav:"outcome"`
	ExpiresAt         int64          `dynamodbav:"ttl"`
}

// Millis is t in unix milliseconds, the unit every stored time uses.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// Time is the time of unix milliseconds ms; 0 (not set) is the zero time.
func Time(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// AttemptEntry is the attempt log's entry for d's attempt number n (0: a
// manual attempt), before its result is filled in.
func (d Delivery) AttemptEntry(id string, n int) Attempt {
	kind := AttemptAuto
	if n == 0 {
		kind = AttemptManual
	}
	return Attempt{ID: id, DeliveryID: d.ID, Kind: kind, Series: d.Series, Number: n, ExpiresAt: d.ExpiresAt}
}

// Expired reports whether an item with DynamoDB TTL ttl (unix seconds) is past
// it at now. DynamoDB deletes expired items late (up to days), so reads treat
// them as gone themselves.
func Expired(ttl int64, now time.Time) bool { return ttl != 0 && ttl <= now.Unix() }
