// Command stats folds the table's stream (delivery items' changes) into
// hourly counters per endpoint and per account (package stats).
package main

import (
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/onlambda"
)

func main() { onlambda.Start("stats", func(a *app.App) any { return a.Stats().Handle }) }
