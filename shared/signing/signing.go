// Package signing makes and checks the X-Gifq-Signature header and the
// Standard Webhooks headers (standard.go).
//
// The header has Stripe's layout:
//
//	X-Gifq-Signature: t=1733011200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// where v1 is the hex HMAC-SHA256, keyed with the endpoint's secret string
// (whsec_...), of "<t>.<raw body>". During a secret rotation the header
// carries one v1 per active secret. Receivers import this package and call
// Verify with the raw request body; see ExampleVerify.
package signing

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header is the name of the signature header.
const Header = "X-Gifq-Signature"

// DefaultTolerance is how far a signature's timestamp may be from now.
const DefaultTolerance = 5 * time.Minute

// SecretPrefix starts every endpoint secret.
const SecretPrefix = "whsec_"

// NewSecret returns a fresh endpoint secret: whsec_ and 32 random bytes in base64.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("signing: no randomness: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Compute returns the hex v1 signature of body at unix time t with secret.
func Compute(secret string, t int64, body []byte) string {
	return hex.EncodeToString(mac(secret, t, body))
}

func mac(secret string, t int64, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(strconv.AppendInt(nil, t, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Sign returns the header value for body at time t, one v1 per secret.
func Sign(secrets []string, t time.Time, body []byte) string {
	ts := t.Unix()
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(ts, 10))
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(Compute(s, ts, body))
	}
	return b.String()
}

// Errors Verify returns. Compare with errors.Is.
var (
	ErrNoHeader      = errors.New("signing: no signature header")
	ErrMalformed     = errors.New("signing: malformed signature header")
	ErrNoSignatures  = errors.New("signing: no v1 signature in header")
	ErrTooOld        = errors.New("signing: timestamp outside the tolerance")
	ErrNoMatch       = errors.New("signing: no signature matches")
	ErrNoSecret      = errors.New("signing: no secret to verify with")
	errBadTimestamp  = errors.New("signing: malformed timestamp")
	errDuplicateTime = errors.New("signing: more than one timestamp")
)

// Options tune Verify. The zero value means DefaultTolerance and time.Now.
type Options struct {
	Tolerance time.Duration    // how old (or how far ahead) t may be; 0 means DefaultTolerance
	Now       func() time.Time // for tests
}

// Verify checks header against the raw body with any of the secrets (pass the
// old and the new one while you rotate). It returns nil when one v1 signature
// matches one secret and the timestamp is within the tolerance.
// Comparisons are constant-time.
func Verify(body []byte, header string, secrets []string, opts Options) error {
	if header == "" {
		return ErrNoHeader
	}
	if len(secrets) == 0 {
		return ErrNoSecret
	}
	t, sigs, err := Parse(header)
	if err != nil {
		return err
	}
	if !opts.within(t) {
		return ErrTooOld
	}
	wants := make([][]byte, len(secrets))
	for i, s := range secrets {
		wants[i] = mac(s, t, body)
	}
	if !anyEqual(wants, sigs) {
		return ErrNoMatch
	}
	return nil
}

// anyEqual reports whether one of sigs is one of wants. hmac.Equal is
// constant-time, and every pair is compared, so timing does not tell which
// secret or signature matched.
func anyEqual(wants, sigs [][]byte) bool {
	matched := false
	for _, want := range wants {
		for _, sig := range sigs {
			if hmac.Equal(want, sig) {
				matched = true
			}
		}
	}
	return matched
}

// Parse splits a header into its timestamp and its decoded v1 signatures.
// Unknown schemes (v0=, v2=...) are ignored, as are v1 values that are not
// 32 bytes of hex, so a newer sender does not break an older receiver.
func Parse(header string) (t int64, sigs [][]byte, err error) {
	seenT := false
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return 0, nil, ErrMalformed
		}
		switch k {
		case "t":
			if seenT {
				return 0, nil, errors.Join(ErrMalformed, errDuplicateTime)
			}
			seenT = true
			t, err = strconv.ParseInt(v, 10, 64)
			if err != nil || t <= 0 {
				return 0, nil, errors.Join(ErrMalformed, errBadTimestamp)
			}
		case "v1":
			b, err := hex.DecodeString(v)
			if err == nil && len(b) == sha256.Size {
				sigs = append(sigs, b)
			}
		}
	}
	if !seenT {
		return 0, nil, ErrMalformed
	}
	if len(sigs) == 0 {
		return 0, nil, ErrNoSignatures
	}
	return t, sigs, nil
}
