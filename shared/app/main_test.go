//go:build !emulators

package app_test

import (
	"testing"

	"github.com/gifq/webhooks/localstack/testenv"
)

// The emulators for the package's tests (call_bench_test.go has its own,
// with the benchmarks' tag).
func TestMain(m *testing.M) { testenv.Main(m) }
