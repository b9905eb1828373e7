// Command deliver is the SQS-triggered function that makes delivery attempts.
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/app"
)

func main() {
	a, err := app.FromEnv(context.Background(), "deliver", os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(a.Worker().Handle)
}
