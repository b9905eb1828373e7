// Command sweeper is the function EventBridge runs every 15 minutes to re-queue
// deliveries that are due but stuck, and every minute ({"mode":"schedule"})
// to send the messages of parked deliveries that fall due.
package main

import (
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/onlambda"
)

func main() { onlambda.Start("sweeper", func(a *app.App) any { return a.SweeperFunction().Handle }) }
