package signing

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary header values to the parser every receiver runs
// on untrusted input. Seeds: the f.Add calls and testdata/fuzz/FuzzParse.
//
//	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 30s ./shared/signing
func FuzzParse(f *testing.F) {
	sig := strings.Repeat("ab", 32)
	f.Add("t=1764460800,v1=" + sig)
	f.Add("t=1764460800, v1=" + sig + ",v1=" + strings.Repeat("CD", 32))
	f.Add("t=1764460800,v0=zz,v2=" + sig + ",v1=" + sig)
	f.Add("v1=" + sig + ",t=1")
	f.Add("t=1,t=2,v1=" + sig)
	f.Add("t=-1,v1=" + sig)
	f.Add("t=9223372036854775808,v1=" + sig)
	f.Add("t=+5,v1=" + sig)
	f.Add("t=1,v1=" + sig[:63])
	f.Add("t=1,v1==" + sig)
	f.Add("")
	f.Add(",")
	f.Add("=")
	f.Add("t")
	f.Add(" t = 1 , v1 = " + sig)
	f.Add("t=1\x00,v1=" + sig)
	f.Add(Sign([]string{"whsec_a", "whsec_b"}, time.Unix(1_764_460_800, 0), []byte("{}")))
	f.Fuzz(func(t *testing.T, header string) {
		ts, sigs, err := Parse(header)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoSignatures) {
				t.Fatalf("Parse(%q): error %v is neither ErrMalformed nor ErrNoSignatures", header, err)
			}
			if ts != 0 || sigs != nil {
				t.Fatalf("Parse(%q) failed but returned t=%d and %d signatures", header, ts, len(sigs))
			}
			return
		}
		if ts <= 0 {
			t.Fatalf("Parse(%q) accepted timestamp %d", header, ts)
		}
		if len(sigs) == 0 {
			t.Fatalf("Parse(%q) accepted a header without a v1 signature", header)
		}
		if n := strings.Count(header, "v1="); len(sigs) > n {
			t.Fatalf("Parse(%q) returned %d signatures from %d v1= fields", header, len(sigs), n)
		}
		for _, s := range sigs {
			if len(s) != 32 {
				t.Fatalf("Parse(%q) returned a %d-byte signature", header, len(s))
			}
			// Every signature came from the header's text (case-insensitive hex).
			if !strings.Contains(strings.ToLower(header), hex.EncodeToString(s)) {
				t.Fatalf("Parse(%q) returned signature %x that is not in the header", header, s)
			}
		}
		// The canonical form of what was parsed parses to the same thing.
		canon := "t=" + strconv.FormatInt(ts, 10)
		for _, s := range sigs {
			canon += ",v1=" + hex.EncodeToString(s)
		}
		ts2, sigs2, err := Parse(canon)
		if err != nil || ts2 != ts || len(sigs2) != len(sigs) {
			t.Fatalf("canonical %q of %q parsed to %d, %d sigs, %v", canon, header, ts2, len(sigs2), err)
		}
		for i := range sigs {
			if !bytes.Equal(sigs[i], sigs2[i]) {
				t.Fatalf("canonical %q of %q: signature %d differs", canon, header, i)
			}
		}
	})
}

// FuzzSignVerify: whatever the secrets, time and body, what Sign makes,
// Verify accepts with each of the secrets and rejects with any other secret
// or a changed body.
func FuzzSignVerify(f *testing.F) {
	f.Add("whsec_a", "whsec_b", int64(1_764_460_800), []byte(`{"event":"payout.fulfilled"}`))
	f.Add("whsec_a", "", int64(1), []byte{})
	f.Add("", "x", int64(1<<40), []byte{0xff, 0x00, ','})
	f.Add("s,v1=", "t=1", int64(99), []byte("t=1,v1="))
	f.Fuzz(func(t *testing.T, s1, s2 string, unix int64, body []byte) {
		if unix <= 0 || unix > 1<<45 || s1 == s2 {
			return
		}
		at := time.Unix(unix, 0)
		h := Sign([]string{s1, s2}, at, body)
		opts := Options{Now: func() time.Time { return at }}
		for _, s := range []string{s1, s2} {
			if err := Verify(body, h, []string{s}, opts); err != nil {
				t.Fatalf("Verify(Sign) with %q: %v (header %q)", s, err, h)
			}
		}
		// HMAC pads short keys with zeros, so "k" and "k\x00" are one key;
		// this one differs from both in a non-zero byte.
		other := s1 + s2 + "\x01"
		if err := Verify(body, h, []string{other}, opts); !errors.Is(err, ErrNoMatch) {
			t.Fatalf("Verify with another secret %q: %v", other, err)
		}
		changed := append(append([]byte{}, body...), ' ')
		if err := Verify(changed, h, []string{s1, s2}, opts); !errors.Is(err, ErrNoMatch) {
			t.Fatalf("Verify of a changed body: %v", err)
		}
	})
}

// VerifyStandard never panics on any header, accepts what SignStandard made
// for the same id, time and body, and refuses any other id or body.
func FuzzStandardSignVerify(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef"), "dlv_1", int64(1_764_460_800), []byte(`{"event":"a"}`), "v1,abc v1a,xyz")
	f.Add([]byte{}, "", int64(1), []byte{}, "")
	f.Fuzz(func(t *testing.T, key []byte, id string, unix int64, body []byte, header string) {
		secret := SecretPrefix + base64.StdEncoding.EncodeToString(key)
		at := time.Unix(unix, 0)
		opts := Options{Now: func() time.Time { return at }}
		_ = VerifyStandard(body, id, strconv.FormatInt(unix, 10), header, []string{secret}, opts) // must not panic
		if len(key) < MinStandardKeyBytes || unix <= 0 || unix > 1<<45 || id == "" {
			return
		}
		sig := SignStandard([]string{secret}, id, at, body)
		ts := strconv.FormatInt(unix, 10)
		if err := VerifyStandard(body, id, ts, sig, []string{secret}, opts); err != nil {
			t.Fatalf("VerifyStandard(SignStandard): %v", err)
		}
		if err := VerifyStandard(body, id+"x", ts, sig, []string{secret}, opts); !errors.Is(err, ErrNoMatch) {
			t.Fatalf("another id: %v", err)
		}
		if err := VerifyStandard(append(append([]byte{}, body...), ' '), id, ts, sig, []string{secret}, opts); !errors.Is(err, ErrNoMatch) {
			t.Fatalf("a changed body: %v", err)
		}
	})
}
