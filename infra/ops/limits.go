package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// Commands that set the API's per-key ingest limits. A key's limit is its
// own, else its account's, else the deployment's (INGEST_RATE_PER_SECOND,
// INGEST_BURST); 0 inherits. The api function picks a change up within
// API_KEY_CACHE_TTL (30 s).
const limitUsage = `  account set-ingest-limit -account ID [-per-second N] [-burst N]   (0: the deployment default)
  key set-limit -account ID -key KEY_ID [-per-second N] [-burst N]  (0: the account's limit)
  key show-limit -account ID -key KEY_ID`

func isLimitCommand(cmd string) bool {
	return cmd == "account set-ingest-limit" || cmd == "key set-limit" || cmd == "key show-limit"
}

func setIngestLimit(ctx context.Context, st *store.Store, cmd string, args []string) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	account := fs.String("account", "", "account id")
	keyID := fs.String("key", "", "key id (key list shows them)")
	rate := fs.Float64("per-second", 0, "events per second at the API (0: inherit)")
	burst := fs.Int("burst", 0, "events at once (0: inherit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l := ratelimit.Limit{Rate: *rate, Burst: *burst}
	var err error
	switch {
	case *account == "":
		return errors.New(cmd + " needs -account")
	case *rate < 0 || *burst < 0:
		return errors.New("-per-second and -burst are 0 (inherit) or positive")
	case cmd != "account set-ingest-limit" && *keyID == "":
		return errors.New(cmd + " needs -key")
	case cmd == "key show-limit":
		return showIngestLimit(ctx, st, *account, *keyID)
	case cmd == "key set-limit":
		err = st.SetKeyIngestLimit(ctx, *account, *keyID, l)
	default:
		err = st.SetAccountIngestLimit(ctx, *account, l)
	}
	if errors.Is(err, store.ErrNotFound) {
		return errors.New("no such account or key")
	}
	if err != nil {
		return err
	}
	fmt.Printf("ingest limit set: rate %s, burst %s; in effect within 30 s\n", orInherit(*rate, "/s"), orInherit(float64(*burst), ""))
	return nil
}

func orInherit(v float64, unit string) string {
	if v == 0 {
		return "inherited"
	}
	return fmt.Sprint(v) + unit
}

// showIngestLimit prints what a key's limit is made of: the 3 a.m. answer
// to "why does this producer get 429s?".
func showIngestLimit(ctx context.Context, st *store.Store, account, keyID string) error {
	acct, own, err := st.IngestLimits(ctx, account, keyID)
	if err != nil {
		return err
	}
	fmt.Printf("key %s: rate %s, burst %s\naccount %s: rate %s, burst %s\n(the account inherits the stack's ingestRatePerSecond and ingestBurst, 10/s and 50 by default)\n",
		keyID, orInherit(own.Rate, "/s"), orInherit(float64(own.Burst), ""), account, orInherit(acct.Rate, "/s"), orInherit(float64(acct.Burst), ""))
	return nil
}
