// Command redrive is the function ops invoke from the Lambda console to move
// dead-lettered deliveries back for a fresh series (events/redrive.json).
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/app"
)

func main() {
	a, err := app.FromEnv(context.Background(), "redrive", os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(a.Redriver().Handle)
}
