package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/gifq/webhooks/shared/keylimit"
	"github.com/gifq/webhooks/shared/store"
)

// Commands that set the API's per-key ingest limits. A key's limit is its
// own, else its account's, else the deployment's (INGEST_RATE_PER_SECOND,
// INGEST_BURST); 0 inherits. The api function picks a change up within
// API_KEY_CACHE_TTL (30 s).
const limitUsage = `  account set-ingest-limit -account ID [-per-second N] [-burst N]   (0: the deployment default)
  key set-limit -account ID -key KEY_ID [-per-second N] [-burst N]  (0: the account's limit)`

func isLimitCommand(cmd string) bool {
	return cmd == "account set-ingest-limit" || cmd == "key set-limit"
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
	l := keylimit.Limit{Rate: *rate, Burst: *burst}
	var err error
	switch {
	case *account == "":
		return errors.New(cmd + " needs -account")
	case *rate < 0 || *burst < 0:
		return errors.New("-per-second and -burst are 0 (inherit) or positive")
	case cmd == "key set-limit" && *keyID == "":
		return errors.New("key set-limit needs -key")
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
	fmt.Printf("ingest limit set: %s/s, burst %s (0 inherits); in effect within 30 s\n", orInherit(*rate), orInherit(float64(*burst)))
	return nil
}

func orInherit(v float64) string {
	if v == 0 {
		return "inherited"
	}
	return fmt.Sprint(v)
}
