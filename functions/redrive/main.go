// Command redrive is the function ops invoke from the Lambda console to move
// dead-lettered deliveries back for a fresh series (events/redrive.json).
package main

import (
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/onlambda"
)

func main() { onlambda.Start("redrive", func(a *app.App) any { return a.Redriver().Handle }) }
