// Command deliver is the SQS-triggered function that makes delivery attempts.
package main

import (
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/onlambda"
)

func main() {
	onlambda.Start("deliver", func(a *app.App) any { return onlambda.MailNotices(a).Worker().Handle })
}
