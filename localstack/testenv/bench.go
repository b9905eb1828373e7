package testenv

import (
	"flag"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchMain is Main for a package whose only users of the emulators are
// its benchmarks: they start only for a benchmark run (go test -bench), so
// that `make test` pays nothing for the package.
func BenchMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	Main(m)
}

// CPUTime is this process's CPU time so far, user and system (getrusage):
// a benchmark's cpu-ms/op counts the process's own work, not the emulators'.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
