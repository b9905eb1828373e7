package httpapi

// The account's v1a (ed25519) signing keys (docs/signing.md): the list and
// rotation need the API key; the JWKS is public, so that a receiver fetches
// it with nothing but the account's id.

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// DefaultKeyOverlap is how long a rotated-out key stays published (and
// keeps signing beside the new one); maxKeyOverlap bounds the request's.
const (
	DefaultKeyOverlap = 24 * time.Hour
	maxKeyOverlap     = 7 * 24 * time.Hour
)

// jwksCacheSeconds is how long a receiver (or a CDN) may keep the JWKS. A
// new key is published at the rotation, and the old one keeps signing
// beside it for the overlap, so a copy this old still verifies.
const jwksCacheSeconds = 300

type signingKeyView struct {
	Kid       string `json:"kid"`
	PublicKey string `json:"public_key"` // whpk_<base64>, the Standard Webhooks form
	CreatedAt string `json:"created_at"`
	RetiresAt string `json:"retires_at,omitempty"`
}

type signingKeysView struct {
	Data     []signingKeyView `json:"data"`
	JWKSPath string           `json:"jwks_path"` // relative to the API's base URL
}

func jwksPath(accountID string) string { return "/v1/accounts/" + accountID + "/jwks.json" }

func viewSigningKeys(accountID string, keys []domain.SigningKey) signingKeysView {
	v := signingKeysView{Data: make([]signingKeyView, 0, len(keys)), JWKSPath: jwksPath(accountID)}
	for _, k := range keys {
		v.Data = append(v.Data, signingKeyView{Kid: k.ID, PublicKey: signing.FormatPublicKey(k.Public),
			CreatedAt: rfc3339(k.CreatedAt), RetiresAt: rfc3339(k.RetiresAt)})
	}
	return v
}

func (a *API) listSigningKeys(ctx context.Context, req *request) response {
	keys, err := a.Store.PublishedSigningKeys(ctx, req.account)
	if err != nil {
		return a.internal(ctx, err)
	}
	return ok(http.StatusOK, viewSigningKeys(req.account, keys))
}

func (a *API) rotateSigningKey(ctx context.Context, req *request) response {
	var in struct {
		// How long the previous key stays published and signing (default
		// 24 h, at most 7 days; 0 retires it at once, after a leak).
		OverlapSeconds *float64 `json:"overlap_seconds"`
	}
	if len(req.body) > 0 {
		if r, failed := decodeJSON(req.body, &in); failed {
			return r
		}
	}
	overlap := DefaultKeyOverlap
	if n := in.OverlapSeconds; n != nil {
		if !wholeNumber(*n) || *n < 0 || *n > maxKeyOverlap.Seconds() {
			return fail(http.StatusUnprocessableEntity, "invalid_overlap", "overlap_seconds must be a whole number from 0 to 604800")
		}
		overlap = time.Duration(*n) * time.Second
	}
	keys, err := a.Store.RotateSigningKey(ctx, req.account, overlap)
	var prev *store.PreviousKeyLive
	if errors.As(err, &prev) {
		return fail(http.StatusConflict, "previous_key_live", "the key the last rotation replaced still signs until "+rfc3339(prev.RetiresAt)+
			" (at most two keys are live); rotate again after that, or with overlap_seconds 0 to retire every older key at once (receivers then need the new JWKS)")
	}
	if errors.Is(err, store.ErrConflict) {
		return fail(http.StatusConflict, "conflict", "the keys were rotated at the same moment; try again")
	}
	if errors.Is(err, store.ErrNoSealer) {
		return noSigningKeys()
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	return ok(http.StatusOK, viewSigningKeys(req.account, keys))
}

// jwksAccount is the account of a JWKS path, /v1/accounts/<id>/jwks.json.
func jwksAccount(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/v1/accounts/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/jwks.json")
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// getJWKS answers an account's published public keys, without a key. An
// account that does not exist answers an empty set like one without keys,
// so the route does not tell which account ids exist.
func (a *API) getJWKS(ctx context.Context, method, accountID string) response {
	if method != http.MethodGet {
		return methodNotAllowed([]string{http.MethodGet})
	}
	if !domain.HasPrefix(accountID, "acct") {
		return notFound("account")
	}
	keys, err := a.Store.PublishedSigningKeys(ctx, accountID)
	if err != nil {
		return a.internal(ctx, err)
	}
	set := signing.JWKS{Keys: make([]signing.JWK, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, signing.NewJWK(k.ID, k.Public))
	}
	r := ok(http.StatusOK, set)
	r.headers = map[string]string{"Cache-Control": "public, max-age=" + strconv.Itoa(jwksCacheSeconds)}
	return r
}

// schemeFrom reads an endpoint's signature_scheme and, for one with v1a,
// makes sure the account has a signing key before any delivery needs it.
func (a *API) schemeFrom(ctx context.Context, account, raw string) (domain.SignatureScheme, response, bool) {
	scheme, valid := domain.ParseSignatureScheme(raw)
	if !valid {
		return "", fail(http.StatusUnprocessableEntity, "invalid_signature_scheme", `signature_scheme must be "v1", "v1a" or "both"`), true
	}
	if scheme == domain.SchemeV1a || scheme == domain.SchemeBoth {
		_, err := a.Store.EnsureSigningKey(ctx, account)
		if errors.Is(err, store.ErrNoSealer) {
			return "", noSigningKeys(), true
		}
		if err != nil {
			return "", a.internal(ctx, err), true
		}
	}
	return scheme, response{}, false
}

// noSigningKeys: a deployment without a KMS key keeps no private key (it
// would be plaintext in the table), so v1a cannot be had there.
func noSigningKeys() response {
	return fail(http.StatusServiceUnavailable, "signing_keys_unavailable",
		"v1a needs the deployment's KMS key (KMS_KEY_ID) and this one has none; nothing was changed")
}
