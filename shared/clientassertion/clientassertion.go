// Package clientassertion is OAuth2's private_key_jwt client
// authentication (RFC 7523 2.2, OpenID Connect Core 9): a short-lived JWT,
// signed with the client's private key (RS256 or ES256), that the client
// sends to the token endpoint instead of a secret.
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
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"time"
)

// Type is the client_assertion_type the token request carries.
const Type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// Life is how long an assertion is valid: long enough for one token
// request, short enough that a copy is of no use later.
const Life = 60 * time.Second

// MinRSABits is the smallest RSA key taken.
const MinRSABits = 2048

// Key is a parsed signing key and its JWS algorithm.
type Key struct {
	Alg    string // "RS256" or "ES256"
	signer crypto.Signer
}

// ErrKey: not a PEM private key of a kind taken.
var ErrKey = errors.New("private_key must be a PEM RSA key of at least 2048 bits or an EC P-256 key (PKCS #8, PKCS #1 or SEC 1)")

// Parse reads a PEM private key: RSA (RS256) of at least MinRSABits, or
// ECDSA on P-256 (ES256).
func Parse(pemKey string) (Key, error) {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return Key{}, ErrKey
	}
	var k any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return Key{}, ErrKey
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() >= MinRSABits {
			return Key{Alg: "RS256", signer: k}, nil
		}
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return Key{Alg: "ES256", signer: k}, nil
		}
	}
	return Key{}, ErrKey
}

// Claims of an assertion (RFC 7523 3).
type Claims struct {
	Iss string `json:"iss"` // the client id
	Sub string `json:"sub"` // the client id
	Aud string `json:"aud"` // the token endpoint's URL
	Iat int64  `json:"iat"`
	Exp int64  `json:"exp"` // Life after iat
	Jti string `json:"jti"` // unique: 128 random bits
}

// Sign is an assertion by clientID for the token endpoint tokenURL at now.
func (k Key) Sign(clientID, tokenURL string, now time.Time) (string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": k.Alg, "typ": "JWT"})
	claims, _ := json.Marshal(Claims{Iss: clientID, Sub: clientID, Aud: tokenURL,
		Iat: now.Unix(), Exp: now.Add(Life).Unix(), Jti: hex.EncodeToString(jti)})
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	switch s := k.signer.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, s, crypto.SHA256, digest[:])
	case *ecdsa.PrivateKey:
		var r, v *big.Int
		if r, v, err = ecdsa.Sign(rand.Reader, s, digest[:]); err == nil {
			sig = make([]byte, 64) // JWS: R and S, 32 bytes each (RFC 7518 3.4)
			r.FillBytes(sig[:32])
			v.FillBytes(sig[32:])
		}
	default:
		err = ErrKey
	}
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}
