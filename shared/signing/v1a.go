package signing

// Standard Webhooks v1a: an ed25519 signature, so that a receiver verifies
// with a public key and holds no secret that could forge a request:
//
//	webhook-signature: v1a,<base64 ed25519 signature of "<id>.<timestamp>.<raw body>">
//
// over the same signed content as v1. During a key rotation there is one
// v1a per published key, space-separated (and, for an endpoint that wants
// both schemes, the v1 HMAC ones beside them). The public keys are served as
// a JWKS (RFC 7517, OKP/Ed25519 per RFC 8037) by GET /v1/signing-keys/jwks.json;
// a receiver fetches it and passes the keys to VerifyStandardV1a.
//
// The Standard Webhooks reference library for Go (v0.0.1) verifies only v1
// (HMAC), so this verifies v1a per the spec with crypto/ed25519.

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PublicKeyPrefix starts a Standard Webhooks public key: whpk_ and the
// base64 of the 32-byte ed25519 key.
const PublicKeyPrefix = "whpk_"

// ErrNoPublicKey: no key to verify with.
var ErrNoPublicKey = errors.New("signing: no public key to verify with")

// signedContent is what v1 and v1a sign: "<id>.<unix seconds>.<raw body>".
func signedContent(id string, t int64, body []byte) []byte {
	b := make([]byte, 0, len(id)+len(body)+22)
	b = append(b, id...)
	b = append(b, '.')
	b = strconv.AppendInt(b, t, 10)
	b = append(b, '.')
	return append(b, body...)
}

// SignStandardV1a returns the v1a signatures of body, one "v1a,<b64>" per
// key, space-separated; empty without keys.
func SignStandardV1a(keys []ed25519.PrivateKey, id string, t time.Time, body []byte) string {
	if len(keys) == 0 {
		return ""
	}
	msg := signedContent(id, t.Unix(), body)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(k, msg))
	}
	return strings.Join(parts, " ")
}

// VerifyStandardV1a checks the three Standard Webhooks headers against the
// raw body with the account's public keys (from its JWKS): one v1a
// signature must verify under one key, and the timestamp must be within the
// tolerance. v1 (HMAC) entries in the header are ignored.
func VerifyStandardV1a(body []byte, id, timestamp, signature string, keys []ed25519.PublicKey, opts Options) error {
	if id == "" || timestamp == "" || signature == "" {
		return ErrNoHeader
	}
	if len(keys) == 0 {
		return ErrNoPublicKey
	}
	t, sigs, err := standardSignatures(timestamp, signature, "v1a", ed25519.SignatureSize, opts)
	if err != nil {
		return err
	}
	msg := signedContent(id, t, body)
	for _, k := range keys {
		if len(k) != ed25519.PublicKeySize {
			continue
		}
		for _, sig := range sigs {
			if ed25519.Verify(k, msg, sig) {
				return nil
			}
		}
	}
	return ErrNoMatch
}

// FormatPublicKey is a key in the Standard Webhooks form, whpk_<base64>.
func FormatPublicKey(k ed25519.PublicKey) string {
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(k)
}

// ParsePublicKey reads a whpk_ key.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, PublicKeyPrefix)
	b, err := base64.StdEncoding.DecodeString(rest)
	if !ok || err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("signing: %q is not whpk_ and the base64 of a 32-byte ed25519 key", s)
	}
	return ed25519.PublicKey(b), nil
}

// JWK is one public key of a JWKS (RFC 8037's OKP form for Ed25519).
type JWK struct {
	Kty string `json:"kty"`           // "OKP"
	Crv string `json:"crv"`           // "Ed25519"
	X   string `json:"x"`             // the 32-byte key, base64url without padding
	Kid string `json:"kid"`           // the key's id
	Use string `json:"use,omitempty"` // "sig"
	Alg string `json:"alg,omitempty"` // "EdDSA"
}

// JWKS is a key set: {"keys":[...]}.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// NewJWK describes an ed25519 public key.
func NewJWK(kid string, k ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k), Kid: kid, Use: "sig", Alg: "EdDSA"}
}

// ParseJWKS reads a JWKS document and returns its Ed25519 keys by kid. Keys
// of other types are skipped (a set may hold others); an Ed25519 entry whose
// x is not a 32-byte key is an error.
func ParseJWKS(doc []byte) (map[string]ed25519.PublicKey, error) {
	var set JWKS
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("signing: JWKS: %w", err)
	}
	out := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("signing: JWKS key %q: x is not a 32-byte key in base64url", k.Kid)
		}
		out[k.Kid] = ed25519.PublicKey(x)
	}
	return out, nil
}

// PublicKeys are the keys of a parsed JWKS, for VerifyStandardV1a.
func PublicKeys(byKid map[string]ed25519.PublicKey) []ed25519.PublicKey {
	out := make([]ed25519.PublicKey, 0, len(byKid))
	for _, k := range byKid {
		out = append(out, k)
	}
	return out
}
