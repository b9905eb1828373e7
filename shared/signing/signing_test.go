package signing

import (
	"crypto/hmac"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

type vector struct {
	Secret string `json:"secret"`
	T      int64  `json:"t"`
	Body   string `json:"body"`
	V1     string `json:"v1"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors []vector }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return f.Vectors
}

// The vectors were computed with openssl, not with this package.
func TestVectorsComputedIndependently(t *testing.T) {
	for _, v := range loadVectors(t) {
		if got := Compute(v.Secret, v.T, []byte(v.Body)); got != v.V1 {
			t.Errorf("Compute(%q, %d) = %s, want %s", v.Secret, v.T, got, v.V1)
		}
		header := "t=" + itoa(v.T) + ",v1=" + v.V1
		if got := Sign([]string{v.Secret}, time.Unix(v.T, 0), []byte(v.Body)); got != header {
			t.Errorf("Sign = %s, want %s", got, header)
		}
		at := func() time.Time { return time.Unix(v.T, 0) }
		if err := Verify([]byte(v.Body), header, []string{v.Secret}, Options{Now: at}); err != nil {
			t.Errorf("Verify(vector %d): %v", v.T, err)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestVerify(t *testing.T) {
	now := time.Unix(1_764_460_800, 0)
	body := []byte(`{"event":"payout.fulfilled"}`)
	oldSecret, newSecret := "whsec_old", "whsec_new"
	sigAt := func(secret string, at time.Time) string { return Compute(secret, at.Unix(), body) }
	ts := "t=1764460800"

	tests := []struct {
		name    string
		body    []byte
		header  string
		secrets []string
		tol     time.Duration
		want    error
	}{
		{"valid", body, ts + ",v1=" + sigAt(newSecret, now), []string{newSecret}, 0, nil},
		{"spaces after commas", body, ts + ", v1=" + sigAt(newSecret, now), []string{newSecret}, 0, nil},
		{"rotation: two v1, receiver has the new secret", body, ts + ",v1=" + sigAt(newSecret, now) + ",v1=" + sigAt(oldSecret, now), []string{newSecret}, 0, nil},
		{"rotation: two v1, receiver still has the old secret", body, ts + ",v1=" + sigAt(newSecret, now) + ",v1=" + sigAt(oldSecret, now), []string{oldSecret}, 0, nil},
		{"receiver holds both secrets", body, ts + ",v1=" + sigAt(oldSecret, now), []string{newSecret, oldSecret}, 0, nil},
		{"unknown scheme ignored", body, ts + ",v0=abc,v1=" + sigAt(newSecret, now), []string{newSecret}, 0, nil},
		{"wrong secret", body, ts + ",v1=" + sigAt(oldSecret, now), []string{newSecret}, 0, ErrNoMatch},
		{"body changed by one byte", []byte(`{"event":"payout.fulfilleD"}`), ts + ",v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrNoMatch},
		{"re-serialised body", []byte(`{"event": "payout.fulfilled"}`), ts + ",v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrNoMatch},
		{"timestamp changed", body, "t=1764460801,v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrNoMatch},
		{"too old", body, "t=1764460499,v1=" + Compute(newSecret, 1764460499, body), []string{newSecret}, 0, ErrTooOld},
		{"just inside tolerance", body, "t=1764460500,v1=" + Compute(newSecret, 1764460500, body), []string{newSecret}, 0, nil},
		{"too far in the future", body, "t=1764461101,v1=" + Compute(newSecret, 1764461101, body), []string{newSecret}, 0, ErrTooOld},
		{"custom tolerance", body, "t=1764460499,v1=" + Compute(newSecret, 1764460499, body), []string{newSecret}, time.Hour, nil},
		{"empty header", body, "", []string{newSecret}, 0, ErrNoHeader},
		{"no secret", body, ts + ",v1=" + sigAt(newSecret, now), nil, 0, ErrNoSecret},
		{"no timestamp", body, "v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrMalformed},
		{"two timestamps", body, ts + "," + ts + ",v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrMalformed},
		{"bad timestamp", body, "t=abc,v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrMalformed},
		{"negative timestamp", body, "t=-5,v1=" + sigAt(newSecret, now), []string{newSecret}, 0, ErrMalformed},
		{"no v1", body, ts, []string{newSecret}, 0, ErrNoSignatures},
		{"v1 not hex", body, ts + ",v1=zz", []string{newSecret}, 0, ErrNoSignatures},
		{"v1 too short", body, ts + ",v1=" + sigAt(newSecret, now)[:62], []string{newSecret}, 0, ErrNoSignatures},
		{"garbage", body, "hello", []string{newSecret}, 0, ErrMalformed},
		{"stripe header name inside", body, "Stripe-Signature: " + ts, []string{newSecret}, 0, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.body, tt.header, tt.secrets, Options{Tolerance: tt.tol, Now: func() time.Time { return now }})
			if !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignCarriesOneV1PerSecret(t *testing.T) {
	h := Sign([]string{"whsec_a", "whsec_b"}, time.Unix(10, 0), []byte("{}"))
	ts, sigs, err := Parse(h)
	if err != nil || ts != 10 || len(sigs) != 2 {
		t.Fatalf("Parse(%q) = %d, %d sigs, %v", h, ts, len(sigs), err)
	}
	if !strings.HasPrefix(h, "t=10,v1=") || strings.Count(h, "v1=") != 2 {
		t.Fatalf("header %q", h)
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || !strings.HasPrefix(a, SecretPrefix) || len(a) < len(SecretPrefix)+32 {
		t.Fatalf("secrets %q %q", a, b)
	}
}

func FuzzVerify(f *testing.F) {
	body := []byte(`{"event":"payout.fulfilled"}`)
	now := time.Unix(1_764_460_800, 0)
	f.Add(body, Sign([]string{"whsec_x"}, now, body))
	f.Add([]byte("{}"), "t=1,v1=00")
	f.Add([]byte(""), ",,,=,t==,v1")
	f.Add(body, "t=1764460800,v1="+strings.Repeat("ab", 32)+",v1=,t")
	f.Fuzz(func(t *testing.T, b []byte, header string) {
		err := Verify(b, header, []string{"whsec_x"}, Options{Now: func() time.Time { return now }})
		if err != nil {
			return
		}
		// Only a header carrying the secret's signature over exactly these bytes may pass.
		ts, sigs, perr := Parse(header)
		if perr != nil {
			t.Fatalf("verified a header Parse rejects: %q", header)
		}
		want := mac("whsec_x", ts, b)
		for _, s := range sigs {
			if hmac.Equal(s, want) {
				return
			}
		}
		t.Fatalf("verified %q over %q without its signature", header, b)
	})
}
