// Package onboard is the ops function: it creates an account and its first
// API key on a deployed stack, from the Lambda console's "Test" button or
// `aws lambda invoke` (events/ops-create-account.json), so that a team's
// first key needs neither Go, the checkout nor DynamoDB write credentials of
// its own. The key is returned once and never logged.
package onboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what onboarding writes.
type Store interface {
	CreateAccount(ctx context.Context, name string, ratePerSecond float64) (domain.Account, error)
	CreateAPIKey(ctx context.Context, accountID string) (domain.APIKey, string, error)
}

// Request is the invocation's event.
type Request struct {
	// Name of the new account (1-100 characters). Either Name or AccountID.
	Name string `json:"name,omitempty"`
	// RatePerSecond is the new account's delivery rate (0: the deployment's default).
	RatePerSecond float64 `json:"rate_per_second,omitempty"`
	// AccountID adds a key to an existing account instead (a second key, or
	// one for a team that lost theirs; revoke the old one with the ops tool).
	AccountID string `json:"account_id,omitempty"`
}

// Response is what the invocation returns: the only place the key is seen.
type Response struct {
	AccountID string `json:"account_id"`
	Name      string `json:"name,omitempty"`
	KeyID     string `json:"key_id"`
	APIKey    string `json:"api_key"`
	Note      string `json:"note"`
}

// MaxRate bounds rate_per_second (the API's own bound on an endpoint's rate).
const MaxRate = 10000

// Validate says what is wrong with r, nil when nothing is.
func (r Request) Validate() error {
	var errs []error
	name := strings.TrimSpace(r.Name)
	switch {
	case name == "" && r.AccountID == "":
		errs = append(errs, errors.New(`give "name" for a new account, or "account_id" to add a key to one`))
	case name != "" && r.AccountID != "":
		errs = append(errs, errors.New(`give "name" (a new account) or "account_id" (a key for an existing one), not both`))
	case utf8.RuneCountInString(name) > 100:
		errs = append(errs, errors.New(`"name" is at most 100 characters`))
	case r.AccountID != "" && !domain.HasPrefix(r.AccountID, "acct"):
		errs = append(errs, fmt.Errorf(`"account_id" %q is not an account id (acct_...)`, r.AccountID))
	}
	if math.IsNaN(r.RatePerSecond) || r.RatePerSecond < 0 || r.RatePerSecond > MaxRate {
		errs = append(errs, fmt.Errorf(`"rate_per_second" is 0 (the default) to %d`, MaxRate))
	}
	if r.AccountID != "" && r.RatePerSecond != 0 {
		errs = append(errs, errors.New(`"rate_per_second" is for a new account; change an existing one's with the ops tool (account set-rate)`))
	}
	return errors.Join(errs...)
}

// Onboarder handles the ops function's invocations.
type Onboarder struct {
	Store Store
	Log   *slog.Logger
}

// ErrInvalid wraps what is wrong with a request: nothing was written.
var ErrInvalid = errors.New("invalid request")

// Handle creates the account (unless it is given) and a key, and returns
// the key. A bad request changes nothing and says why.
func (o *Onboarder) Handle(ctx context.Context, r Request) (Response, error) {
	if err := r.Validate(); err != nil {
		return Response{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	res := Response{AccountID: r.AccountID}
	if r.AccountID == "" {
		a, err := o.Store.CreateAccount(ctx, strings.TrimSpace(r.Name), r.RatePerSecond)
		if err != nil {
			return Response{}, fmt.Errorf("create account: %w", err)
		}
		res.AccountID, res.Name = a.ID, a.Name
	}
	k, secret, err := o.Store.CreateAPIKey(ctx, res.AccountID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Response{}, fmt.Errorf("%w: no account %s", ErrInvalid, res.AccountID)
		}
		return Response{}, fmt.Errorf("create API key for %s: %w", res.AccountID, err)
	}
	res.KeyID, res.APIKey = k.ID, secret
	res.Note = "The key is shown only now and is not logged: store it in your secret manager. Send it as Authorization: Bearer <key>."
	// The ids only: never the key (the table keeps its SHA-256).
	o.Log.InfoContext(ctx, "api key created", "account_id", res.AccountID, "key_id", k.ID, "key_prefix", k.Prefix, "new_account", r.AccountID == "")
	return res, nil
}
