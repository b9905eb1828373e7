//go:build !awsdest

package main

import (
	"context"
	"strings"
	"testing"
)

// A runner built without the AWS destinations says so when pointed at a
// LocalStack, instead of starting and answering AWS endpoints 422.
func TestLocalStackWithoutTheTagSaysHowToBuild(t *testing.T) {
	if err := useLocalStackDestinations(context.Background(), nil, ""); err != nil {
		t.Errorf("no LOCALSTACK_ENDPOINT: %v", err)
	}
	err := useLocalStackDestinations(context.Background(), nil, "http://127.0.0.1:4566")
	if err == nil || !strings.Contains(err.Error(), "DEV_TAGS=awsdest") {
		t.Errorf("LOCALSTACK_ENDPOINT set: %v, want an error naming DEV_TAGS=awsdest", err)
	}
}
