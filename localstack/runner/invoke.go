package runner

import (
	"bytes"
	"context"
	"fmt"
	"sync"

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
	case "ops":
		return lambda.NewHandler(a.Onboarder().Handle), nil
	case "stats":
		return lambda.NewHandler(a.Stats().Handle), nil
	}
	return nil, fmt.Errorf("no function %q (api, deliver, sweeper, redrive, ops, stats)", fn)
}

// Invoke calls a function with an event's JSON, like `sam local invoke`.
func Invoke(ctx context.Context, a *app.App, fn string, event []byte) ([]byte, error) {
	h, err := Handler(a, fn)
	if err != nil {
		return nil, err
	}
	return h.Invoke(ctx, event)
}

// Concurrent is a handler for fn (any handler lambda.NewHandler takes) that
// can be invoked from many goroutines at once, as the local runner does.
// lambda.NewHandler's Invoke answers with the bytes of a buffer it reuses
// for its next invocation, which is safe where the Lambda runtime invokes
// one at a time but not here: invoked at once, answers crossed. Each call
// takes a handler of its own from a pool and copies its answer out before
// giving it back.
func Concurrent(fn any) lambda.Handler {
	c := &concurrent{}
	c.pool.New = func() any { return lambda.NewHandler(fn) }
	return c
}

type concurrent struct{ pool sync.Pool }

func (c *concurrent) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	h := c.pool.Get().(lambda.Handler)
	defer c.pool.Put(h)
	out, err := h.Invoke(ctx, payload)
	return bytes.Clone(out), err
}
