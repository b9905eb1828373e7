//go:build !awsdest

package main

import (
	"context"
	"errors"

	"github.com/gifq/webhooks/shared/app"
)

// useLocalStackDestinations refuses LOCALSTACK_ENDPOINT: this runner was
// built without the AWS destinations (awsdest.go says why), and an AWS
// endpoint's registration would answer 422 with nothing saying why.
func useLocalStackDestinations(_ context.Context, _ *app.App, endpoint string) error {
	if endpoint == "" {
		return nil
	}
	return errors.New("LOCALSTACK_ENDPOINT is set, but this runner was built without AWS destinations: make dev DEV_TAGS=awsdest")
}
