// Command api is the API Gateway function: event ingest and the management API.
package main

import "github.com/gifq/webhooks/shared/app"

func main() { app.Start("api", func(a *app.App) any { return a.API().Handle }) }
