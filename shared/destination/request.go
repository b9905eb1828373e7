package destination

import (
	"crypto/ed25519"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/endpointcfg"
)

// Request is one attempt, in the seam's terms: the event and delivery it
// carries, the body, what the provider needs of the endpoint (its URL and
// headers, or its Destination; the signing material), and the attempt's
// deadline.
type Request struct {
	// The event.
	EventID   string
	EventType string
	// OrderingKey is the event's ordering key, if it has one (a stream's
	// partition key falls back to EventID).
	OrderingKey string
	// Seq is its number in the key's sequence; PrevFailed: the key's
	// previous event failed for good to this ordered endpoint.
	Seq        int64
	PrevFailed bool
	Body       []byte
	// The delivery: DeliveryID is the same on every attempt (the
	// receiver's idempotency key), AttemptID unique per attempt.
	DeliveryID string
	AttemptID  string
	AttemptNum int // 0: a manual attempt
	// Deadline of this attempt (the endpoint's timeout within the
	// deployment's); zero: the provider's own default.
	Deadline time.Time

	// The endpoint's config, by provider. HTTP: URL and Headers (set before
	// the provider's own headers, so they can never replace them). AWS:
	// Destination.
	URL     string
	Headers map[string]string
	// OAuth2: the client credentials to get the bearer token with (nil:
	// none); EndpointID keys the token cache.
	OAuth2     *domain.OAuth2
	EndpointID string
	// TLS: the client certificate and CA bundle (nil: neither).
	TLS         *domain.ClientTLS
	Destination *domain.Destination
	// Signing: the current secret first, two during a rotation; V1aKeys
	// sign webhook-signature's v1a entries; OmitV1 leaves out its v1 ones.
	Secrets []string
	V1aKeys []ed25519.PrivateKey
	OmitV1  bool
}

// For is the request of one attempt of delivery deliveryID (ev to ep):
// attempt num of its series (0: a manual one), signed with the secrets and
// keys live at now, under the endpoint's effective settings for the
// attempt (cfg, resolved once by the step: its timeout within the
// deployment's, its headers), to its destination (an AWS endpoint's
// target; nil: its URL).
func For(ep *domain.Endpoint, ev *domain.Event, deliveryID, attemptID string, num int, now time.Time, cfg endpointcfg.Effective) Request {
	at := domain.Millis(now)
	var deadline time.Time
	if cfg.Timeout > 0 {
		deadline = now.Add(cfg.Timeout)
	}
	return Request{URL: ep.URL, Body: ev.Body, Secrets: ep.SigningSecrets(at), V1aKeys: ep.V1aKeys(at), OmitV1: !ep.SignsV1(),
		EventType: ev.Type, EventID: ev.ID, OrderingKey: ev.OrderingKey, Seq: ev.Seq, DeliveryID: deliveryID, AttemptID: attemptID, AttemptNum: num,
		Deadline: deadline, Headers: cfg.Headers, OAuth2: cfg.OAuth2, TLS: cfg.TLS, EndpointID: ep.ID, Destination: ep.Destination}
}
