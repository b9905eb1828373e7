package onboard_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/onboard"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

func onboarder(t *testing.T) (*onboard.Onboarder, *store.Store, *bytes.Buffer) {
	env := testenv.New(t)
	st := store.New(env.DB, env.Table)
	var logs bytes.Buffer
	return &onboard.Onboarder{Store: st, Log: obs.NewLogger(&logs, slog.LevelDebug, "ops")}, st, &logs
}

// TestCreatesAccountAndWorkingKey: the returned key authenticates as the
// new account, and appears nowhere in the logs.
func TestCreatesAccountAndWorkingKey(t *testing.T) {
	o, st, logs := onboarder(t)
	res, err := o.Handle(ctx, onboard.Request{Name: " acme ", RatePerSecond: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !domain.HasPrefix(res.AccountID, "acct") || res.Name != "acme" || !strings.HasPrefix(res.APIKey, store.APIKeyPrefix) || res.Note == "" {
		t.Fatalf("response %+v", res)
	}
	k, err := st.Authenticate(ctx, res.APIKey)
	if err != nil || k.AccountID != res.AccountID || k.ID != res.KeyID {
		t.Fatalf("the key authenticates as %+v, %v", k, err)
	}
	a, err := st.GetAccount(ctx, res.AccountID)
	if err != nil || a.RatePerSecond != 7 {
		t.Errorf("account %+v, %v", a, err)
	}
	if strings.Contains(logs.String(), res.APIKey) || strings.Contains(logs.String(), res.APIKey[len(store.APIKeyPrefix)+6:]) {
		t.Errorf("the key is in the logs: %s", logs)
	}
	if !strings.Contains(logs.String(), res.KeyID) {
		t.Errorf("the log does not name the key id: %s", logs)
	}
	// A second key for the same account.
	again, err := o.Handle(ctx, onboard.Request{AccountID: res.AccountID})
	if err != nil || again.AccountID != res.AccountID || again.APIKey == res.APIKey {
		t.Fatalf("second key %+v, %v", again, err)
	}
}

// TestBadRequestChangesNothing: each bad request says why and writes nothing.
func TestBadRequestChangesNothing(t *testing.T) {
	o, _, logs := onboarder(t)
	for _, c := range []struct {
		req  onboard.Request
		want string
	}{
		{onboard.Request{}, `give "name"`},
		{onboard.Request{Name: "   "}, `give "name"`},
		{onboard.Request{Name: "a", AccountID: "acct_01J00000000000000000000000"}, "not both"},
		{onboard.Request{Name: strings.Repeat("n", 101)}, "at most 100"},
		{onboard.Request{Name: "a", RatePerSecond: -1}, "rate_per_second"},
		{onboard.Request{AccountID: "acme"}, "not an account id"},
		{onboard.Request{AccountID: domain.NewID("acct")}, "no account"},
	} {
		_, err := o.Handle(ctx, c.req)
		if !errors.Is(err, onboard.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrInvalid saying %q", c.req, err, c.want)
		}
	}
	if strings.Contains(logs.String(), "api key created") {
		t.Errorf("a bad request created a key: %s", logs)
	}
}
