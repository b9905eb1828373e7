package runner

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/app"
)

// Handler returns a function's handler by name, as the Lambda runtime
// would call it.
func Handler(a *app.App, fn string) (lambda.Handler, error) {
	switch fn {
	case "api":
		return lambda.NewHandler(a.API().Handle), nil
	case "deliver":
		return lambda.NewHandler(a.Worker().Handle), nil
	case "sweeper":
		return lambda.NewHandler(a.SweeperFunction().Handle), nil
	case "redrive":
		return lambda.NewHandler(a.Redriver().Handle), nil
	}
	return nil, fmt.Errorf("no function %q (api, deliver, sweeper, redrive)", fn)
}

// Invoke calls a function with an event's JSON, like `sam local invoke`.
func Invoke(ctx context.Context, a *app.App, fn string, event []byte) ([]byte, error) {
	h, err := Handler(a, fn)
	if err != nil {
		return nil, err
	}
	return h.Invoke(ctx, event)
}
