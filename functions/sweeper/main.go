// Command sweeper is the function EventBridge runs every 15 minutes to
// re-queue deliveries that are due but stuck.
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/app"
)

func main() {
	a, err := app.FromEnv(context.Background(), "sweeper", os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(a.Sweeper().Handle)
}
