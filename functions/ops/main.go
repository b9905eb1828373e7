// Command ops is the function operators invoke from the Lambda console's
// "Test" button or `aws lambda invoke` to create an account and its first
// API key on a deployed stack (events/ops-create-account.json). The key is
// in the invocation's response only.
package main

import (
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/onlambda"
)

func main() { onlambda.Start("ops", func(a *app.App) any { return a.Onboarder().Handle }) }
