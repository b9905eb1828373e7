package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// RFC 8032's first test key (section 7.1, TEST 1).
var rfcSeed, _ = hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")

// A v1a signature of the Standard Webhooks spec's example message, made by
// another implementation (Python's cryptography 48, Ed25519PrivateKey.sign
// over "<id>.<timestamp>.<body>") with RFC 8032's first key: ours must be
// the same bytes (ed25519 is deterministic) and must verify.
func TestV1aMatchesAnotherImplementation(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(rfcSeed)
	body := []byte(`{"test": 2432232314}`)
	const want = "v1a,fldxM4gAKugP6nnt1hdz3sgGfZ6d99nzrMFnZOELIxbzEHoVmAb2ADpkJK7zgPePmPsle0zV9jSeGlHFG2NVAw=="
	ts := time.Unix(1614265330, 0)
	if got := SignStandardV1a([]ed25519.PrivateKey{priv}, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, body); got != want {
		t.Fatalf("v1a signature\n got %s\nwant %s", got, want)
	}
	opts := Options{Now: func() time.Time { return ts }}
	if err := VerifyStandardV1a(body, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", want, []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)}, opts); err != nil {
		t.Fatal(err)
	}
}

// RFC 8037 (appendix A.2) gives TEST 1's public key as a JWK: our JWK of it
// must carry the same x.
func TestJWKMatchesRFC8037(t *testing.T) {
	pub := ed25519.NewKeyFromSeed(rfcSeed).Public().(ed25519.PublicKey)
	jwk := NewJWK("k1", pub)
	if jwk.Kty != "OKP" || jwk.Crv != "Ed25519" || jwk.X != "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" || jwk.Kid != "k1" {
		t.Fatalf("JWK %+v; want kty OKP, crv Ed25519, x as RFC 8037 A.2", jwk)
	}
}

func TestV1aVerifiesWithThePublicKeyOnly(t *testing.T) {
	oldPub, oldPriv := newKey(t)
	newPub, newPriv := newKey(t)
	otherPub, _ := newKey(t)
	body := []byte(`{"event":"payout.fulfilled"}`)
	now := time.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	sig := SignStandardV1a([]ed25519.PrivateKey{newPriv, oldPriv}, "dlv_1", now, body)
	if n := len(strings.Fields(sig)); n != 2 {
		t.Fatalf("want one v1a per key during a rotation: %q", sig)
	}
	for name, keys := range map[string][]ed25519.PublicKey{"new": {newPub}, "old": {oldPub}, "jwks of both": {otherPub, newPub}} {
		if err := VerifyStandardV1a(body, "dlv_1", ts, sig, keys, Options{}); err != nil {
			t.Errorf("%s key: %v", name, err)
		}
	}
	cases := []struct {
		name   string
		body   []byte
		id, ts string
		sig    string
		keys   []ed25519.PublicKey
		want   error
	}{
		{"changed body", []byte(body[1:]), "dlv_1", ts, sig, []ed25519.PublicKey{newPub}, ErrNoMatch},
		{"other id", body, "dlv_2", ts, sig, []ed25519.PublicKey{newPub}, ErrNoMatch},
		{"other timestamp", body, "dlv_1", strconv.FormatInt(now.Unix()+1, 10), sig, []ed25519.PublicKey{newPub}, ErrNoMatch},
		{"another account's key", body, "dlv_1", ts, sig, []ed25519.PublicKey{otherPub}, ErrNoMatch},
		{"no keys", body, "dlv_1", ts, sig, nil, ErrNoPublicKey},
		{"stale", body, "dlv_1", strconv.FormatInt(now.Add(-time.Hour).Unix(), 10), sig, []ed25519.PublicKey{newPub}, ErrTooOld},
		{"only v1 in the header", body, "dlv_1", ts, "v1,bm90IGEgc2lnbmF0dXJl", []ed25519.PublicKey{newPub}, ErrNoSignatures},
		{"truncated signature", body, "dlv_1", ts, sig[:40], []ed25519.PublicKey{newPub}, ErrNoSignatures},
		{"no id", body, "", ts, sig, []ed25519.PublicKey{newPub}, ErrNoHeader},
	}
	for _, c := range cases {
		if err := VerifyStandardV1a(c.body, c.id, c.ts, c.sig, c.keys, Options{}); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// An endpoint that wants both schemes gets v1 and v1a in one header: the
// reference library (v1 only) still verifies its v1, our HMAC check skips
// the v1a, and the v1a check skips the v1.
func TestBothSchemesInOneHeader(t *testing.T) {
	pub, priv := newKey(t)
	secret := NewSecret()
	body := []byte(`{"a":1}`)
	now := time.Now()
	sig := SignStandard([]string{secret}, "dlv_b", now, body) + " " + SignStandardV1a([]ed25519.PrivateKey{priv}, "dlv_b", now, body)
	wh, _ := standardwebhooks.NewWebhook(secret)
	if err := wh.Verify(body, standardHeaders("dlv_b", now, sig)); err != nil {
		t.Errorf("the reference library rejects a header with a v1a beside the v1: %v", err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	if err := VerifyStandard(body, "dlv_b", ts, sig, []string{secret}, Options{}); err != nil {
		t.Errorf("v1: %v", err)
	}
	if err := VerifyStandardV1a(body, "dlv_b", ts, sig, []ed25519.PublicKey{pub}, Options{}); err != nil {
		t.Errorf("v1a: %v", err)
	}
}

func TestJWKSRoundTripAndBadKeys(t *testing.T) {
	a, _ := newKey(t)
	b, _ := newKey(t)
	doc, err := json.Marshal(JWKS{Keys: []JWK{NewJWK("ka", a), NewJWK("kb", b), {Kty: "RSA", Kid: "rsa", X: "ignored"}}})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseJWKS(doc)
	if err != nil || len(keys) != 2 || !keys["ka"].Equal(a) || !keys["kb"].Equal(b) {
		t.Fatalf("ParseJWKS: %v %v", keys, err)
	}
	if len(PublicKeys(keys)) != 2 {
		t.Fatal("PublicKeys lost a key")
	}
	for _, bad := range []string{`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"x","x":"c2hvcnQ"}]}`, `{"keys":`, `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"x","x":"*"}]}`} {
		if _, err := ParseJWKS([]byte(bad)); err == nil {
			t.Errorf("ParseJWKS(%s) accepted it", bad)
		}
	}
	if k, err := ParsePublicKey(FormatPublicKey(a)); err != nil || !k.Equal(a) {
		t.Fatalf("whpk_ round trip: %v", err)
	}
	if _, err := ParsePublicKey("whsec_" + FormatPublicKey(a)[5:]); err == nil {
		t.Fatal("a whsec_ string taken for a public key")
	}
}
