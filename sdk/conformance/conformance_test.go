package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/signing"
)

var update = flag.Bool("update", false, "rewrite fixtures.json")

const file = "fixtures.json"

// The committed fixtures are what Fixtures makes: a change to shared/signing
// or to the generator shows here until `go test ./sdk/conformance -update`.
func TestCommittedFixturesAreGenerated(t *testing.T) {
	want := Marshal(Fixtures())
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the generator makes: run go test ./sdk/conformance -update", file)
	}
}

// Go's verify package (shared/signing) reaches every fixture's result.
func TestGoVerifierPassesTheFixtures(t *testing.T) {
	var f File
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, fx := range f.Fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			if got := Kind(verify(t, fx)); got != fx.Expected {
				t.Fatalf("%s: got %q, want %q", fx.Description, got, fx.Expected)
			}
		})
		seen[fx.Scheme+" "+fx.Expected] = true
	}
	// The set covers, for each scheme, success and the failures a receiver meets.
	for _, s := range []string{SchemeGifq, SchemeStandardV1, SchemeV1a} {
		for _, k := range []string{"ok", "no_match", "too_old", "no_header", "no_signatures"} {
			if !seen[s+" "+k] {
				t.Errorf("no %s fixture expecting %s", s, k)
			}
		}
	}
}

func verify(t *testing.T, fx Fixture) error {
	body, err := base64.StdEncoding.DecodeString(fx.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range fx.Headers {
		h.Set(k, v)
	}
	opts := signing.Options{Tolerance: time.Duration(fx.Tolerance) * time.Second, Now: func() time.Time { return time.Unix(fx.Now, 0) }}
	id, ts, sig := h.Get(signing.HeaderWebhookID), h.Get(signing.HeaderWebhookTimestamp), h.Get(signing.HeaderWebhookSignature)
	switch fx.Scheme {
	case SchemeGifq:
		return signing.Verify(body, h.Get(signing.Header), fx.Secrets, opts)
	case SchemeStandardV1:
		return signing.VerifyStandard(body, id, ts, sig, fx.Secrets, opts)
	case SchemeV1a:
		doc, err := json.Marshal(fx.JWKS)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := signing.ParseJWKS(doc)
		if err != nil {
			t.Fatal(err)
		}
		return signing.VerifyStandardV1a(body, id, ts, sig, signing.PublicKeys(keys), opts)
	}
	t.Fatalf("unknown scheme %q", fx.Scheme)
	return nil
}
