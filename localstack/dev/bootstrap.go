package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// devKey is the dev account's key, kept in the data folder (local only: a
// deployed stack never stores a key in clear) so restarts print the same one.
type devKey struct {
	accountID string
	secret    string
}

type devState struct {
	AccountID string `json:"account_id"`
	APIKey    string `json:"api_key"`
}

// bootstrap finds or makes the dev account and its key (DEV_API_KEY if set).
func bootstrap(ctx context.Context, a *app.App, s settings) (devKey, error) {
	path := filepath.Join(s.dataDir, "dev-account.json")
	var st devState
	if raw, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(raw, &st)
	}
	want := st.APIKey
	if s.devKey != "" {
		want = s.devKey
	}
	if want != "" {
		k, err := a.Store.Authenticate(ctx, want)
		if err == nil {
			return save(path, devState{AccountID: k.AccountID, APIKey: want})
		}
		if !errors.Is(err, store.ErrUnauthorized) {
			return devKey{}, err
		}
	}
	acct, err := a.Store.CreateAccount(ctx, "dev", 0)
	if err != nil {
		return devKey{}, err
	}
	if want != "" && want == s.devKey {
		if _, err := a.Store.AddAPIKey(ctx, acct.ID, want); err != nil {
			return devKey{}, err
		}
	} else {
		if _, want, err = a.Store.CreateAPIKey(ctx, acct.ID); err != nil {
			return devKey{}, err
		}
	}
	return save(path, devState{AccountID: acct.ID, APIKey: want})
}

func save(path string, st devState) (devKey, error) {
	raw, _ := json.MarshalIndent(st, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return devKey{}, err
	}
	return devKey{accountID: st.AccountID, secret: st.APIKey}, os.WriteFile(path, raw, 0o600)
}

// demoDescription marks the endpoint make dev registers for its receiver.
const demoDescription = "make dev demo receiver"

// ensureDemoEndpoint registers the demo receiver for the dev account once,
// and moves it when make dev's receiver listens elsewhere (RECEIVER_ADDR)
// rather than leave an endpoint that nothing answers beside a new one.
func ensureDemoEndpoint(ctx context.Context, a *app.App, accountID, url string) (string, error) {
	eps, err := a.Store.ListEndpoints(ctx, accountID)
	if err != nil {
		return "", err
	}
	switch id, move := pickDemo(eps, url); {
	case id != "" && move:
		_, err := a.Store.UpdateEndpoint(ctx, accountID, id, store.EndpointPatch{URL: &url})
		return id, err
	case id != "":
		return id, nil
	}
	now := domain.Millis(a.Now())
	ep := domain.Endpoint{
		ID: domain.NewID("ep"), AccountID: accountID, URL: url, Description: demoDescription,
		Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: now}}, CreatedAt: now, UpdatedAt: now,
	}
	return ep.ID, a.Store.CreateEndpoint(ctx, ep)
}

// pickDemo finds the demo endpoint among the dev account's: one at url, or
// else make dev's own at another address, to be moved to url; "" for none.
func pickDemo(eps []domain.Endpoint, url string) (id string, move bool) {
	for _, ep := range eps {
		if ep.URL == url {
			return ep.ID, false
		}
	}
	for _, ep := range eps {
		if ep.Description == demoDescription {
			return ep.ID, true
		}
	}
	return "", false
}
