// Package conformance makes the signed fixtures every receiver library
// (shared/signing in Go, sdk/typescript, sdk/python) must pass: the same
// requests, signed by shared/signing, with the result each must reach.
// fixtures.json is what Fixtures returns; `go test ./sdk/conformance -update`
// rewrites it, and the test fails while the committed file differs.
package conformance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/gifq/webhooks/shared/signing"
)

// Schemes a fixture is verified with.
const (
	SchemeGifq       = "x-gifq-signature"      // X-Gifq-Signature with the secrets
	SchemeStandardV1 = "standard-webhooks-v1"  // webhook-* headers, HMAC, with the secrets
	SchemeV1a        = "standard-webhooks-v1a" // webhook-* headers, ed25519, with the JWKS
)

// Fixture is one request and the result a verifier must reach.
type Fixture struct {
	Name        string            `json:"name"`
	Scheme      string            `json:"scheme"`
	Headers     map[string]string `json:"headers"`
	Body        string            `json:"body_base64"` // the raw body, bytes-exact
	Secrets     []string          `json:"secrets,omitempty"`
	JWKS        *signing.JWKS     `json:"jwks,omitempty"`
	Now         int64             `json:"now"`                         // the verifier's clock, unix seconds
	Tolerance   int64             `json:"tolerance_seconds,omitempty"` // 0: the default, 300
	Expected    string            `json:"expected"`                    // "ok" or an error kind (Kind)
	Description string            `json:"description"`
}

// File is fixtures.json.
type File struct {
	Comment  string    `json:"comment"`
	Kinds    []string  `json:"kinds"`
	Fixtures []Fixture `json:"fixtures"`
}

// The error kinds, one per shared/signing error a receiver can meet.
var kinds = []struct {
	kind string
	err  error
}{
	{"no_header", signing.ErrNoHeader},
	{"malformed", signing.ErrMalformed},
	{"no_signatures", signing.ErrNoSignatures},
	{"too_old", signing.ErrTooOld},
	{"no_match", signing.ErrNoMatch},
	{"no_secret", signing.ErrNoSecret},
	{"no_standard_key", signing.ErrNoStandardKey},
	{"no_public_key", signing.ErrNoPublicKey},
}

// Kind names a verification error: "ok" for nil, "" for an error that is none of them.
func Kind(err error) string {
	if err == nil {
		return "ok"
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return ""
}

// Fixed material: nothing here is random, so the file is the same on every run.
const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwTk9wl1h8bXY="
	secretB = "whsec_plX1mC0vDe2dH1hJLz3sWLyBLk6qKhFxLbJ9vP2qD4Y="
	msgID   = "dlv_01JEXAMPLE0000000000000000"
	now     = 1764460800 // 2025-11-30T00:00:00Z
)

func key(seedByte byte) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte{seedByte})
	return ed25519.NewKeyFromSeed(seed[:])
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func jwks(keys map[string]ed25519.PrivateKey, order ...string) *signing.JWKS {
	s := &signing.JWKS{Keys: []signing.JWK{}}
	for _, kid := range order {
		s.Keys = append(s.Keys, signing.NewJWK(kid, pub(keys[kid])))
	}
	return s
}

// Fixtures returns the conformance set.
func Fixtures() File {
	body := []byte(`{"event":"payout.fulfilled","payout_type":"gift_cards","data":{"id":"po_123","note":"café ✓\n"}}`)
	tampered := []byte(`{"event":"payout.fulfilled","payout_type":"gift_cards","data":{"id":"po_124","note":"café ✓\n"}}`)
	at := time.Unix(now, 0)
	old := at.Add(-6 * time.Minute)
	ahead := at.Add(6 * time.Minute)
	k1, k2, kOther := key(1), key(2), key(3)
	keys := map[string]ed25519.PrivateKey{"k1": k1, "k2": k2, "k_other": kOther}

	gifq := func(name, desc string, header string, b []byte, secrets []string, expected string) Fixture {
		h := map[string]string{}
		if header != "" {
			h["X-Gifq-Signature"] = header
		}
		return Fixture{Name: name, Scheme: SchemeGifq, Headers: h, Body: b64(b), Secrets: secrets, Now: now, Expected: expected, Description: desc}
	}
	std := func(name, desc, scheme, id string, ts time.Time, sig string, b []byte, expected string) Fixture {
		h := map[string]string{}
		if id != "" {
			h["webhook-id"] = id
		}
		if !ts.IsZero() {
			h["webhook-timestamp"] = itoa(ts.Unix())
		}
		if sig != "" {
			h["webhook-signature"] = sig
		}
		return Fixture{Name: name, Scheme: scheme, Headers: h, Body: b64(b), Now: now, Expected: expected, Description: desc}
	}
	withSecrets := func(f Fixture, s ...string) Fixture { f.Secrets = s; return f }
	withJWKS := func(f Fixture, set *signing.JWKS) Fixture { f.JWKS = set; return f }

	v1 := signing.SignStandard
	v1a := func(ks []ed25519.PrivateKey, ts time.Time, b []byte) string {
		return signing.SignStandardV1a(ks, msgID, ts, b)
	}
	one := []string{secretA}
	both := []string{secretA, secretB}

	fs := []Fixture{
		gifq("gifq/valid", "one v1 with the one secret", signing.Sign(one, at, body), body, one, "ok"),
		gifq("gifq/valid-empty-body", "an empty body signs as \"<t>.\"", signing.Sign(one, at, nil), nil, one, "ok"),
		gifq("gifq/tampered-body", "the body changed after signing", signing.Sign(one, at, body), tampered, one, "no_match"),
		gifq("gifq/old-timestamp", "signed 6 minutes before now (tolerance 5)", signing.Sign(one, old, body), body, one, "too_old"),
		gifq("gifq/future-timestamp", "signed 6 minutes after now", signing.Sign(one, ahead, body), body, one, "too_old"),
		withTolerance(gifq("gifq/old-timestamp-wider-tolerance", "6 minutes old with a 10-minute tolerance", signing.Sign(one, old, body), body, one, "ok"), 600),
		gifq("gifq/rotation-old-secret", "two v1 (old and new secret); the receiver still has the old one", signing.Sign(both, at, body), body, []string{secretA}, "ok"),
		gifq("gifq/rotation-new-secret", "two v1 (old and new secret); the receiver has the new one", signing.Sign(both, at, body), body, []string{secretB}, "ok"),
		gifq("gifq/receiver-holds-both", "one v1 by the new secret; the receiver holds old and new", signing.Sign([]string{secretB}, at, body), body, both, "ok"),
		gifq("gifq/wrong-secret", "signed with another secret", signing.Sign([]string{secretB}, at, body), body, one, "no_match"),
		gifq("gifq/no-header", "no X-Gifq-Signature", "", body, one, "no_header"),
		gifq("gifq/no-secret", "the receiver has no secret", signing.Sign(one, at, body), body, nil, "no_secret"),
		gifq("gifq/malformed-not-kv", "not key=value pairs", "garbage", body, one, "malformed"),
		gifq("gifq/malformed-timestamp", "t is not a number", "t=abc,v1="+signing.Compute(secretA, now, body), body, one, "malformed"),
		gifq("gifq/malformed-two-timestamps", "t twice", "t="+itoa(now)+",t="+itoa(now)+",v1="+signing.Compute(secretA, now, body), body, one, "malformed"),
		gifq("gifq/no-timestamp", "v1 without t", "v1="+signing.Compute(secretA, now, body), body, one, "malformed"),
		gifq("gifq/no-v1", "t alone", "t="+itoa(now), body, one, "no_signatures"),
		gifq("gifq/unknown-scheme-ignored", "a v0 and a short v1 are skipped; the good v1 verifies",
			"t="+itoa(now)+",v0=abcd,v1=abcd,v1="+signing.Compute(secretA, now, body), body, one, "ok"),
		gifq("gifq/only-unknown-schemes", "only v0 entries", "t="+itoa(now)+",v0="+signing.Compute(secretA, now, body), body, one, "no_signatures"),
		gifq("gifq/spaces-around-parts", "spaces after commas are tolerated", "t="+itoa(now)+", v1="+signing.Compute(secretA, now, body), body, one, "ok"),

		withSecrets(std("standard-v1/valid", "one v1 with the one secret", SchemeStandardV1, msgID, at, v1(one, msgID, at, body), body, "ok"), one...),
		withSecrets(std("standard-v1/tampered-body", "the body changed after signing", SchemeStandardV1, msgID, at, v1(one, msgID, at, body), tampered, "no_match"), one...),
		withSecrets(std("standard-v1/other-id", "webhook-id changed after signing", SchemeStandardV1, "dlv_other", at, v1(one, msgID, at, body), body, "no_match"), one...),
		withSecrets(std("standard-v1/old-timestamp", "signed 6 minutes before now", SchemeStandardV1, msgID, old, v1(one, msgID, old, body), body, "too_old"), one...),
		withSecrets(std("standard-v1/rotation-old-secret", "two v1 entries; the receiver has the old secret", SchemeStandardV1, msgID, at, v1(both, msgID, at, body), body, "ok"), secretA),
		withSecrets(std("standard-v1/rotation-new-secret", "two v1 entries; the receiver has the new secret", SchemeStandardV1, msgID, at, v1(both, msgID, at, body), body, "ok"), secretB),
		withSecrets(std("standard-v1/wrong-secret", "signed with another secret", SchemeStandardV1, msgID, at, v1([]string{secretB}, msgID, at, body), body, "no_match"), one...),
		withSecrets(std("standard-v1/v1a-only", "only v1a entries: nothing for an HMAC verifier", SchemeStandardV1, msgID, at, v1a([]ed25519.PrivateKey{k1}, at, body), body, "no_signatures"), one...),
		withSecrets(std("standard-v1/v1-beside-v1a", "v1 and v1a entries (scheme both): v1 verifies", SchemeStandardV1, msgID, at, v1(one, msgID, at, body)+" "+v1a([]ed25519.PrivateKey{k1}, at, body), body, "ok"), one...),
		withSecrets(std("standard-v1/secret-not-a-standard-key", "the secret is not whsec_ + base64 of >= 24 bytes", SchemeStandardV1, msgID, at, v1(one, msgID, at, body), body, "no_standard_key"), "whsec_abc"),
		withSecrets(std("standard-v1/no-signature-header", "webhook-signature missing", SchemeStandardV1, msgID, at, "", body, "no_header"), one...),
		withSecrets(std("standard-v1/no-id-header", "webhook-id missing", SchemeStandardV1, "", at, v1(one, msgID, at, body), body, "no_header"), one...),
		withSecrets(std("standard-v1/malformed-timestamp", "webhook-timestamp is not a number", SchemeStandardV1, msgID, at, v1(one, msgID, at, body), body, "malformed"), one...),
		withSecrets(std("standard-v1/malformed-signature", "entries that are not version,base64 of 32 bytes", SchemeStandardV1, msgID, at, "v1 v1,%%% v1,AAAA v2,"+b64(make([]byte, 32)), body, "no_signatures"), one...),

		withJWKS(std("v1a/valid", "one v1a by the JWKS's key", SchemeV1a, msgID, at, v1a([]ed25519.PrivateKey{k1}, at, body), body, "ok"), jwks(keys, "k1")),
		withJWKS(std("v1a/tampered-body", "the body changed after signing", SchemeV1a, msgID, at, v1a([]ed25519.PrivateKey{k1}, at, body), tampered, "no_match"), jwks(keys, "k1")),
		withJWKS(std("v1a/old-timestamp", "signed 6 minutes before now", SchemeV1a, msgID, old, v1a([]ed25519.PrivateKey{k1}, old, body), body, "too_old"), jwks(keys, "k1")),
		withJWKS(std("v1a/rotation-old-key", "two v1a (old and new key); the cached JWKS has only the old key", SchemeV1a, msgID, at, v1a([]ed25519.PrivateKey{k1, k2}, at, body), body, "ok"), jwks(keys, "k1")),
		withJWKS(std("v1a/rotation-new-key", "two v1a; the JWKS has only the new key", SchemeV1a, msgID, at, v1a([]ed25519.PrivateKey{k1, k2}, at, body), body, "ok"), jwks(keys, "k2")),
		withJWKS(std("v1a/unknown-key", "signed by a key the JWKS does not hold (a verifier with a fetched JWKS refetches, at most once a minute, then rejects)", SchemeV1a, msgID, at, v1a([]ed25519.PrivateKey{k2}, at, body), body, "no_match"), jwks(keys, "k1", "k_other")),
		withJWKS(std("v1a/empty-jwks", "a JWKS without keys", SchemeV1a, msgID, at, v1a([]ed25519.PrivateKey{k1}, at, body), body, "no_public_key"), jwks(keys)),
		withJWKS(std("v1a/v1-only", "only v1 (HMAC) entries: nothing for a v1a verifier", SchemeV1a, msgID, at, v1(one, msgID, at, body), body, "no_signatures"), jwks(keys, "k1")),
		withJWKS(std("v1a/v1a-beside-v1", "v1 then v1a entries (scheme both): v1a verifies", SchemeV1a, msgID, at, v1(one, msgID, at, body)+" "+v1a([]ed25519.PrivateKey{k1}, at, body), body, "ok"), jwks(keys, "k1")),
		withJWKS(std("v1a/malformed-signature", "v1a entries that are not base64 of 64 bytes", SchemeV1a, msgID, at, "v1a,%%% v1a,"+b64(make([]byte, 32)), body, "no_signatures"), jwks(keys, "k1")),
		withJWKS(std("v1a/no-timestamp-header", "webhook-timestamp missing", SchemeV1a, msgID, time.Time{}, v1a([]ed25519.PrivateKey{k1}, at, body), body, "no_header"), jwks(keys, "k1")),
	}
	// Header values a fixture breaks by hand.
	for i := range fs {
		if fs[i].Name == "standard-v1/malformed-timestamp" {
			fs[i].Headers["webhook-timestamp"] = "17644608OO"
		}
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.kind
	}
	return File{
		Comment: "Generated by `go test ./sdk/conformance -update` from shared/signing. Each fixture: the request's headers, " +
			"its raw body (base64), the secrets or JWKS the receiver holds, the receiver's clock (now, unix seconds; tolerance 300 s " +
			"unless tolerance_seconds), and the result: ok or an error kind. Header names are as sent; match them case-insensitively.",
		Kinds:    names,
		Fixtures: fs,
	}
}

func withTolerance(f Fixture, s int64) Fixture { f.Tolerance = s; return f }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Marshal is the file's bytes.
func Marshal(f File) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		panic(err)
	}
	return b.Bytes()
}
