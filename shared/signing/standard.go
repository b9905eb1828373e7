package signing

// Standard Webhooks (https://www.standardwebhooks.com): every attempt also
// carries
//
//	webhook-id:        the delivery's id, the same on every attempt of it
//	webhook-timestamp: the attempt's unix seconds
//	webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">
//
// with one space-separated v1 per active secret during a rotation. The same
// whsec_ secret keys both schemes, differently: X-Gifq-Signature (Stripe's
// layout) uses the whole secret string as the HMAC key; Standard Webhooks
// uses the bytes the part after whsec_ base64-decodes to, which is what its
// libraries do with the secret they are given.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// MinStandardKeyBytes is the shortest key the Standard Webhooks spec allows.
const MinStandardKeyBytes = 24

// ErrNoStandardKey: none of the secrets is whsec_ and base64 of at least 24 bytes.
var ErrNoStandardKey = errors.New("signing: no secret is a Standard Webhooks key (whsec_ + base64 of >= 24 bytes)")

// StandardKey returns the Standard Webhooks HMAC key of a secret: the
// base64-decoded part after whsec_. Every secret NewSecret has made decodes
// (32 bytes); a secret that does not is not usable for this scheme.
func StandardKey(secret string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, false
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) < MinStandardKeyBytes {
		return nil, false
	}
	return key, true
}

func standardMAC(key []byte, id string, t int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, t, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SignStandard returns the webhook-signature value for body, one "v1,<b64>"
// per secret that is a Standard Webhooks key, space-separated. It is empty
// when none is (the sender then leaves the header out).
func SignStandard(secrets []string, id string, t time.Time, body []byte) string {
	var parts []string
	for _, s := range secrets {
		key, ok := StandardKey(s)
		if !ok {
			continue
		}
		parts = append(parts, "v1,"+base64.StdEncoding.EncodeToString(standardMAC(key, id, t.Unix(), body)))
	}
	return strings.Join(parts, " ")
}

// VerifyStandard checks the three Standard Webhooks headers against the raw
// body with any of the secrets: one v1 signature must match one secret and
// the timestamp must be within the tolerance. Comparisons are constant-time.
func VerifyStandard(body []byte, id, timestamp, signature string, secrets []string, opts Options) error {
	if id == "" || timestamp == "" || signature == "" {
		return ErrNoHeader
	}
	if len(secrets) == 0 {
		return ErrNoSecret
	}
	t, sigs, err := standardSignatures(timestamp, signature, "v1", sha256.Size, opts) // v1a entries are VerifyStandardV1a's
	if err != nil {
		return err
	}
	var wants [][]byte
	for _, s := range secrets {
		if k, ok := StandardKey(s); ok {
			wants = append(wants, standardMAC(k, id, t, body))
		}
	}
	if len(wants) == 0 {
		return ErrNoStandardKey
	}
	if !anyEqual(wants, sigs) {
		return ErrNoMatch
	}
	return nil
}

// standardSignatures reads a Standard Webhooks timestamp (within the
// tolerance) and the signatures of one version in webhook-signature (each
// base64 of size bytes; other versions and malformed entries are skipped).
func standardSignatures(timestamp, signature, version string, size int, opts Options) (int64, [][]byte, error) {
	t, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || t <= 0 {
		return 0, nil, errors.Join(ErrMalformed, errBadTimestamp)
	}
	if !opts.within(t) {
		return 0, nil, ErrTooOld
	}
	var sigs [][]byte
	for _, part := range strings.Fields(signature) {
		v, sig, ok := strings.Cut(part, ",")
		if !ok || v != version {
			continue
		}
		if b, err := base64.StdEncoding.DecodeString(sig); err == nil && len(b) == size {
			sigs = append(sigs, b)
		}
	}
	if len(sigs) == 0 {
		return 0, nil, ErrNoSignatures
	}
	return t, sigs, nil
}

// within reports whether unix time t is inside the tolerance of now.
func (o Options) within(t int64) bool {
	tol := o.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	now := time.Now()
	if o.Now != nil {
		now = o.Now()
	}
	d := now.Sub(time.Unix(t, 0))
	return d <= tol && d >= -tol
}
