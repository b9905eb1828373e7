package signing

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func standardHeaders(id string, t time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(t.Unix(), 10))
	h.Set(HeaderWebhookSignature, sig)
	return h
}

// The reference library, not this package, decides whether our signature is right.
func TestStandardSignatureVerifiesWithTheReferenceLibrary(t *testing.T) {
	body := []byte(`{"event":"payout.fulfilled","data":{"id":"po_1"}}`)
	oldSecret, newSecret := NewSecret(), NewSecret()
	now := time.Now()
	sig := SignStandard([]string{newSecret, oldSecret}, "dlv_01ABC", now, body)
	if n := len(strings.Fields(sig)); n != 2 {
		t.Fatalf("want two signatures during a rotation, got %q", sig)
	}
	h := standardHeaders("dlv_01ABC", now, sig)
	for _, s := range []string{oldSecret, newSecret} {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("reference library rejects our signature: %v", err)
		}
		if err := wh.Verify(append([]byte(" "), body...), h); err == nil {
			t.Error("reference library accepts a changed body")
		}
	}
	other, _ := standardwebhooks.NewWebhook(NewSecret())
	if err := other.Verify(body, h); err == nil {
		t.Error("reference library accepts another secret")
	}
}

// The other direction: what the reference library signs, VerifyStandard accepts.
func TestVerifyStandardAcceptsTheReferenceLibrarysSignature(t *testing.T) {
	body := []byte(`{"event":"a"}`)
	secret := NewSecret()
	wh, _ := standardwebhooks.NewWebhook(secret)
	now := time.Unix(1_764_460_800, 0)
	sig, err := wh.Sign("dlv_x", now, body)
	if err != nil {
		t.Fatal(err)
	}
	at := Options{Now: func() time.Time { return now.Add(4 * time.Minute) }}
	if err := VerifyStandard(body, "dlv_x", strconv.FormatInt(now.Unix(), 10), "v1a,AAAA "+sig, []string{NewSecret(), secret}, at); err != nil {
		t.Fatalf("VerifyStandard: %v", err)
	}
	cases := []struct {
		name        string
		id, ts, sig string
		secrets     []string
		opts        Options
		want        error
		body        []byte
	}{
		{"other id", "dlv_y", strconv.FormatInt(now.Unix(), 10), sig, []string{secret}, at, ErrNoMatch, body},
		{"other body", "dlv_x", strconv.FormatInt(now.Unix(), 10), sig, []string{secret}, at, ErrNoMatch, []byte(`{"event":"b"}`)},
		{"too old", "dlv_x", strconv.FormatInt(now.Unix(), 10), sig, []string{secret}, Options{Now: func() time.Time { return now.Add(6 * time.Minute) }}, ErrTooOld, body},
		{"too new", "dlv_x", strconv.FormatInt(now.Unix(), 10), sig, []string{secret}, Options{Now: func() time.Time { return now.Add(-6 * time.Minute) }}, ErrTooOld, body},
		{"bad timestamp", "dlv_x", "soon", sig, []string{secret}, at, ErrMalformed, body},
		{"no v1", "dlv_x", strconv.FormatInt(now.Unix(), 10), "v2,abc", []string{secret}, at, ErrNoSignatures, body},
		{"missing header", "", strconv.FormatInt(now.Unix(), 10), sig, []string{secret}, at, ErrNoHeader, body},
		{"no secret", "dlv_x", strconv.FormatInt(now.Unix(), 10), sig, nil, at, ErrNoSecret, body},
		{"secret not a key", "dlv_x", strconv.FormatInt(now.Unix(), 10), sig, []string{"whsec_short"}, at, ErrNoStandardKey, body},
	}
	for _, c := range cases {
		if err := VerifyStandard(c.body, c.id, c.ts, c.sig, c.secrets, c.opts); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

// Stripe-style signs with the secret string, Standard Webhooks with its decoded bytes.
func TestOneSecretKeysBothSchemes(t *testing.T) {
	secret := NewSecret()
	key, ok := StandardKey(secret)
	if !ok || len(key) != 32 {
		t.Fatalf("NewSecret's secret is not a 32-byte Standard Webhooks key: %d %v", len(key), ok)
	}
	want, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if string(key) != string(want) {
		t.Fatal("StandardKey is not the decoded part after whsec_")
	}
	for _, s := range []string{"whsec_old", "sk_" + strings.TrimPrefix(secret, "whsec_"), "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23))} {
		if _, ok := StandardKey(s); ok {
			t.Errorf("StandardKey(%q) accepted a secret that is not whsec_ + base64 of >= 24 bytes", s)
		}
	}
	if got := SignStandard([]string{"whsec_old"}, "dlv_x", time.Now(), nil); got != "" {
		t.Errorf("a secret that is not a key still signs: %q", got)
	}
}
