package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// capture runs the command with stdout captured.
func capture(t *testing.T, args ...string) (string, error) {
	t.Helper()
	r, w, _ := os.Pipe()
	old := os.Stdout
	os.Stdout = w
	err := run(context.Background(), args)
	w.Close()
	os.Stdout = old
	out, _ := io.ReadAll(r)
	return string(out), err
}

// opsEnv is a table on the emulators that the command reaches through the
// standard AWS settings, as it would a deployed one.
func opsEnv(t *testing.T) (*testenv.Env, *store.Store, context.Context) {
	t.Helper()
	env := testenv.New(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", env.DynamoURL)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	st := store.New(env.DB, env.Table)
	ctx := context.Background()
	return env, st, ctx
}

func TestAccountAndKeyCommands(t *testing.T) {
	env, st, ctx := opsEnv(t)

	out, err := capture(t, "-table", env.Table, "account", "create", "-name", "acme", "-rate", "12")
	if err != nil {
		t.Fatal(err)
	}
	acct := regexp.MustCompile(`acct_[0-9A-Z]{26}`).FindString(out)
	key := regexp.MustCompile(`gifq_[A-Za-z0-9_-]{43}`).FindString(out)
	if acct == "" || key == "" {
		t.Fatalf("output %q", out)
	}
	if k, err := st.Authenticate(ctx, key); err != nil || k.AccountID != acct {
		t.Fatalf("the printed key does not authenticate: %+v %v", k, err)
	}
	if a, _ := st.GetAccount(ctx, acct); a.RatePerSecond != 12 || a.Name != "acme" {
		t.Fatalf("account %+v", a)
	}
	if _, err := capture(t, "-table", env.Table, "account", "set-rate", "-account", acct, "-rate", "3"); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.GetAccount(ctx, acct); a.RatePerSecond != 3 {
		t.Fatalf("rate after set-rate: %v", a.RatePerSecond)
	}
	list, err := capture(t, "-table", env.Table, "key", "list", "-account", acct)
	keyID := regexp.MustCompile(`key_[0-9A-Z]{26}`).FindString(list)
	if err != nil || keyID == "" || strings.Contains(list, key) || !strings.Contains(list, "active") {
		t.Fatalf("key list %q (%v) must name the key, not show it", list, err)
	}
	if _, err := capture(t, "-table", env.Table, "key", "revoke", "-account", acct, "-key", keyID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(ctx, key); err == nil {
		t.Fatal("a revoked key still authenticates")
	}
	if _, err := capture(t, "account", "create", "-name", "x"); err == nil {
		t.Fatal("no table must be an error")
	}
	if _, err := capture(t, "-table", env.Table, "key", "create", "-account", "acct_nope"); err == nil {
		t.Fatal("a key for a missing account must be an error")
	}
}

func TestIngestLimitCommands(t *testing.T) {
	env, st, ctx := opsEnv(t)
	a, err := st.CreateAccount(ctx, "acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := st.CreateAPIKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, "-table", env.Table, "account", "set-ingest-limit", "-account", a.ID, "-per-second", "20", "-burst", "100"); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, "-table", env.Table, "key", "set-limit", "-account", a.ID, "-key", k.ID, "-burst", "7"); err != nil {
		t.Fatal(err)
	}
	acct, own, err := st.IngestLimits(ctx, a.ID, k.ID)
	if err != nil || acct != (ratelimit.Limit{Rate: 20, Burst: 100}) || own != (ratelimit.Limit{Burst: 7}) {
		t.Fatalf("limits stored: account %+v, key %+v (%v)", acct, own, err)
	}
	shown, err := capture(t, "-table", env.Table, "key", "show-limit", "-account", a.ID, "-key", k.ID)
	if err != nil || !strings.Contains(shown, "key "+k.ID+": rate inherited, burst 7") || !strings.Contains(shown, "rate 20/s, burst 100") {
		t.Fatalf("show-limit: %q (%v)", shown, err)
	}
	for _, bad := range [][]string{
		{"account", "set-ingest-limit", "-per-second", "1"},                          // no account
		{"account", "set-ingest-limit", "-account", a.ID, "-per-second", "-1"},       // negative
		{"key", "set-limit", "-account", a.ID, "-burst", "2"},                        // no key
		{"key", "set-limit", "-account", a.ID, "-key", "key_nope", "-burst", "2"},    // unknown key
		{"account", "set-ingest-limit", "-account", "acct_nope", "-per-second", "1"}, // unknown account
	} {
		if _, err := capture(t, append([]string{"-table", env.Table}, bad...)...); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
	if acct2, own2, _ := st.IngestLimits(ctx, a.ID, k.ID); acct2 != acct || own2 != own {
		t.Fatalf("a refused command changed the limits: %+v %+v", acct2, own2)
	}
}
