package app

import (
	"github.com/gifq/webhooks/shared/httpapi"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// KeyLimits is the api function's per-API-key ingest limit: the deployment's
// default, overridden per account or key in the table, remembered as long
// as a key is (API_KEY_CACHE_TTL); each portal session's own limit; and
// each key's limit on management writes.
func (a *App) KeyLimits() *httpapi.KeyLimits {
	return &httpapi.KeyLimits{
		Limiter:    a.Limiter,
		Store:      a.Store,
		Default:    ratelimit.Limit{Rate: a.Config.IngestRatePerSecond, Burst: a.Config.IngestBurst},
		Session:    ratelimit.Limit{Rate: a.Config.PortalRatePerSecond, Burst: a.Config.PortalBurst},
		Management: ratelimit.Limit{Rate: a.Config.ManagementRate, Burst: a.Config.ManagementBurst},
		CacheTTL:   a.Config.APIKeyCacheTTL,
		Log:        a.Log, Now: a.Now,
	}
}
