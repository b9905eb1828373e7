package app

import (
	"runtime/debug"
	"strconv"
)

// gcPercent is the functions' GOGC: the garbage collector runs when the heap
// has grown 400 % over what the last collection kept, instead of Go's 100 %.
// A function's live heap is small (BenchmarkHandle keeps 2 MB live; its heap
// goal goes from 4 to 16 MB, GODEBUG=gctrace=1), far under a 256 MB
// function's memory, and the collector runs a quarter as often: -9.6 % CPU per event in BenchmarkIngest and -12 %
// (median; not significant at n=6) per message in BenchmarkHandle
// (docs/performance.md); GC marking and allocation were ~16 % of make dev's CPU.
const gcPercent = 400

// GCSettings decides the collector's settings from the environment: GOGC or
// GOMEMLIMIT set by the operator win (the runtime has read them); otherwise
// gcPercent, with a soft memory limit of 80 % of the Lambda function's memory
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, in MB) so that a heap that does grow is
// collected before the function runs out. percent 0 and limit 0: leave as is.
func GCSettings(getenv func(string) string) (percent int, limit int64) {
	if getenv("GOGC") == "" {
		percent = gcPercent
	}
	if getenv("GOMEMLIMIT") == "" {
		if mb, err := strconv.ParseInt(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), 10, 64); err == nil && mb > 0 {
			limit = mb << 20 * 8 / 10
		}
	}
	return percent, limit
}

// TuneGC applies GCSettings to this process.
func TuneGC(getenv func(string) string) {
	percent, limit := GCSettings(getenv)
	if percent > 0 {
		debug.SetGCPercent(percent)
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}
