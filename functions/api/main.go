// Command api is the API Gateway function: event ingest and the management API.
package main

import (
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/onlambda"
)

func main() { onlambda.Start("api", func(a *app.App) any { return a.API().Handle }) }
