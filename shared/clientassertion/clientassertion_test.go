package clientassertion

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func pemOf(t *testing.T, k any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// Verify checks jwt's signature with pub and returns its header and claims.
func verify(t *testing.T, jwt string, pub crypto.PublicKey) (map[string]string, Claims) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", jwt)
	}
	enc := base64.RawURLEncoding
	sig, _ := enc.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch p := pub.(type) {
	case *rsa.PublicKey:
		if err := rsa.VerifyPKCS1v15(p, crypto.SHA256, digest[:], sig); err != nil {
			t.Fatalf("RS256 signature: %v", err)
		}
	case *ecdsa.PublicKey:
		if len(sig) != 64 || !ecdsa.Verify(p, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatal("ES256 signature does not verify")
		}
	}
	var h map[string]string
	var c Claims
	hb, _ := enc.DecodeString(parts[0])
	cb, _ := enc.DecodeString(parts[1])
	if json.Unmarshal(hb, &h) != nil || json.Unmarshal(cb, &c) != nil {
		t.Fatalf("header %s claims %s", hb, cb)
	}
	return h, c
}

func TestAssertionsAreSignedShortLivedAndUnique(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Unix(1_800_000_000, 0)
	for alg, k := range map[string]crypto.Signer{"RS256": rsaKey, "ES256": ecKey} {
		key, err := Parse(pemOf(t, k))
		if err != nil || key.Alg != alg {
			t.Fatalf("%s: parse %v, alg %q", alg, err, key.Alg)
		}
		jtis := map[string]bool{}
		for range 3 {
			jwt, err := key.Sign("client-1", "https://auth.example/token", now)
			if err != nil {
				t.Fatal(err)
			}
			h, c := verify(t, jwt, k.Public())
			if h["alg"] != alg || c.Iss != "client-1" || c.Sub != "client-1" || c.Aud != "https://auth.example/token" ||
				c.Iat != now.Unix() || c.Exp != now.Add(Life).Unix() || len(c.Jti) != 32 {
				t.Fatalf("%s: header %v claims %+v", alg, h, c)
			}
			jtis[c.Jti] = true
		}
		if len(jtis) != 3 {
			t.Fatalf("%s: jti repeated: %v", alg, jtis)
		}
	}
}

func TestParseRefusesWeakOrOtherKeys(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(p384)
	for name, in := range map[string]string{
		"rsa 1024":    pemOf(t, small),
		"ec p-384":    pemOf(t, p384),
		"sec1 p-384":  string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})),
		"not pem":     "hello",
		"certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
	} {
		if _, err := Parse(in); err != ErrKey {
			t.Errorf("%s: %v, want ErrKey", name, err)
		}
	}
}
