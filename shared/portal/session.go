// Package portal is the customer's deliveries portal: the session tokens that
// open it (made, parsed and checked here; stored by package store), which
// API routes a session may call, and the page itself, embedded in the api
// function and served with its security headers.
package portal

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// A token is "gifqp_" + the session id + "." + 32 random bytes (base64url).
// The table keeps the SHA-256 of the random part under the session id, so a
// token can be looked up with one GetItem, compared in constant time, expired
// and revoked, and a leaked table holds nothing that opens a session.
const TokenPrefix = "gifqp_"

// Session lifetimes.
const (
	DefaultTTL = time.Hour
	MinTTL     = time.Minute
	MaxTTL     = 24 * time.Hour
)

// Session is one portal session: an account, read-only or not, until ExpiresAt.
type Session struct {
	ID         string `dynamodbav:"id"`
	AccountID  string `dynamodbav:"account_id"`
	KeyID      string `dynamodbav:"key_id,omitempty"` // the API key that minted it: the session dies with it
	SecretHash string `dynamodbav:"secret_hash"`      // hex SHA-256 of the token's random part
	ReadOnly   bool   `dynamodbav:"read_only"`
	CreatedAt  int64  `dynamodbav:"created_at"` // unix ms
	ExpiresAt  int64  `dynamodbav:"expires_at"` // unix ms
	RevokedAt  int64  `dynamodbav:"revoked_at,omitempty"`
	TTL        int64  `dynamodbav:"ttl"` // unix seconds: DynamoDB deletes the item a day after it expires
}

// NewSession makes a session for account, minted with the API key keyID,
// and the token that opens it; the token exists only in the caller's hands
// from here on.
func NewSession(accountID, keyID string, readOnly bool, ttl time.Duration, now time.Time) (Session, string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("portal: no randomness: " + err.Error())
	}
	secret := base64.RawURLEncoding.EncodeToString(b)
	s := Session{
		ID: domain.NewID("ps"), AccountID: accountID, KeyID: keyID, SecretHash: hashSecret(secret), ReadOnly: readOnly,
		CreatedAt: domain.Millis(now), ExpiresAt: domain.Millis(now.Add(ttl)), TTL: now.Add(ttl + 24*time.Hour).Unix(),
	}
	return s, TokenPrefix + s.ID + "." + secret
}

// IsToken reports whether a bearer credential is meant as a portal token
// (and not an API key): only its prefix is looked at.
func IsToken(bearer string) bool { return strings.HasPrefix(bearer, TokenPrefix) }

// ParseToken splits a token into its session id and random part; ok is
// false for anything NewSession could not have made.
func ParseToken(token string) (id, secret string, ok bool) {
	rest, found := strings.CutPrefix(token, TokenPrefix)
	if !found {
		return "", "", false
	}
	id, secret, found = strings.Cut(rest, ".")
	if !found || !domain.HasPrefix(id, "ps") || len(secret) != 43 {
		return "", "", false
	}
	if _, err := base64.RawURLEncoding.DecodeString(secret); err != nil {
		return "", "", false
	}
	return id, secret, true
}

// Why a token is refused. The API answers all of them with the same 401:
// which one it was is for the log, not the caller.
var (
	ErrInvalid = errors.New("portal token unknown or forged")
	ErrExpired = errors.New("portal token expired")
	ErrRevoked = errors.New("portal token revoked")
	// ErrKeyRevoked: the API key that minted the session is revoked (or
	// gone), or the session predates sessions naming their key.
	ErrKeyRevoked = errors.New("portal session's API key revoked")
)

// Check decides whether secret opens s at now.
func (s Session) Check(secret string, now time.Time) error {
	got := hashSecret(secret)
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.SecretHash)) != 1 {
		return ErrInvalid
	}
	if s.RevokedAt != 0 {
		return ErrRevoked
	}
	if domain.Millis(now) >= s.ExpiresAt {
		return ErrExpired
	}
	return nil
}

// CheckKey decides whether the session's minting key, as read now (nil
// when it is not there), still lets it live.
func (s Session) CheckKey(k *domain.APIKey) error {
	if s.KeyID == "" || k == nil || k.ID != s.KeyID || k.AccountID != s.AccountID || k.RevokedAt != 0 {
		return ErrKeyRevoked
	}
	return nil
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}
