package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gifq/webhooks/localstack/testenv"
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

func TestAccountAndKeyCommands(t *testing.T) {
	env := testenv.New(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", env.DynamoURL)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	st := store.New(env.DB, env.Table)
	ctx := context.Background()

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
