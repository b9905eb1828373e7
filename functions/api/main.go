// Command api is the API Gateway function: event ingest and the management API.
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/app"
)

func main() {
	a, err := app.FromEnv(context.Background(), "api", os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(a.API().Handle)
}
