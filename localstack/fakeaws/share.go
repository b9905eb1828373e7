package fakeaws

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"
)

// ServerShare runs run under a CPU profile of this process and returns the
// fraction of the profiled CPU spent on goroutines labelled ServerLabel:
// the servers started with StartServer (the fake, a receiver), from the
// read of each request to the write of its answer. The rest is the client's:
// the code under test, the SDK, net/http's client side, and the runtime's
// background work (the garbage collector's workers, whoever's garbage they
// collect). ok is false when the profile could not be taken (a -cpuprofile
// of the test binary is already running) or read.
func ServerShare(run func()) (fraction float64, ok bool) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		run()
		return 0, false
	}
	run()
	pprof.StopCPUProfile()
	server, total, err := labelledCPU(buf.Bytes(), "side", "server")
	if err != nil || total == 0 {
		return 0, false
	}
	return float64(server) / float64(total), true
}

// labelledCPU reads a gzipped pprof profile and sums its CPU values: those
// of samples labelled key=value, and all.
func labelledCPU(gz []byte, key, value string) (labelled, total int64, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return 0, 0, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return 0, 0, err
	}
	type sample struct {
		values []int64
		labels [][2]int64 // string table indices of key and value
	}
	var samples []sample
	var strs []string
	nTypes := 0
	err = fields(raw, func(num int, wire int, v uint64, b []byte) error {
		switch {
		case num == 1 && wire == 2: // sample_type
			nTypes++
		case num == 2 && wire == 2: // sample
			var s sample
			err := fields(b, func(num int, wire int, v uint64, b []byte) error {
				switch {
				case num == 2 && wire == 0:
					s.values = append(s.values, int64(v))
				case num == 2 && wire == 2:
					return packed(b, func(v uint64) { s.values = append(s.values, int64(v)) })
				case num == 3 && wire == 2:
					var l [2]int64
					if err := fields(b, func(num int, wire int, v uint64, _ []byte) error {
						if wire == 0 && (num == 1 || num == 2) {
							l[num-1] = int64(v)
						}
						return nil
					}); err != nil {
						return err
					}
					s.labels = append(s.labels, l)
				}
				return nil
			})
			if err != nil {
				return err
			}
			samples = append(samples, s)
		case num == 6 && wire == 2: // string_table
			strs = append(strs, string(b))
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	idx := max(nTypes-1, 0) // cpu/nanoseconds is the last value of a Go CPU profile
	str := func(i int64) string {
		if i < 0 || int(i) >= len(strs) {
			return ""
		}
		return strs[i]
	}
	for _, s := range samples {
		if idx >= len(s.values) {
			continue
		}
		v := s.values[idx]
		total += v
		for _, l := range s.labels {
			if str(l[0]) == key && str(l[1]) == value {
				labelled += v
				break
			}
		}
	}
	return labelled, total, nil
}

var errProto = errors.New("fakeaws: malformed profile")

// fields calls f for each field of a protobuf message: its number, wire
// type, and its varint or bytes.
func fields(b []byte, f func(num, wire int, v uint64, b []byte) error) error {
	for len(b) > 0 {
		tag, n := varint(b)
		if n == 0 {
			return errProto
		}
		b = b[n:]
		num, wire := int(tag>>3), int(tag&7)
		var v uint64
		var val []byte
		switch wire {
		case 0:
			v, n = varint(b)
			if n == 0 {
				return errProto
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return errProto
			}
			b = b[8:]
		case 2:
			l, n := varint(b)
			if n == 0 || uint64(len(b)-n) < l {
				return errProto
			}
			val, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return errProto
			}
			b = b[4:]
		default:
			return errProto
		}
		if err := f(num, wire, v, val); err != nil {
			return err
		}
	}
	return nil
}

func packed(b []byte, f func(uint64)) error {
	for len(b) > 0 {
		v, n := varint(b)
		if n == 0 {
			return errProto
		}
		f(v)
		b = b[n:]
	}
	return nil
}

// varint decodes a protobuf varint: its value and length (0: malformed).
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// CPUTime is this process's CPU time so far, user and system (getrusage).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU runs a benchmark's timed loop of b.N ops and reports, per op,
// this process's CPU (cpu-µs/op: getrusage, user and system), the share of
// it the servers started with StartServer took (server-µs/op: the fake, the
// receiver), and the rest (ours-µs/op: the code under test, the SDK, the
// HTTP client, the runtime). Under the test binary's own -cpuprofile (or in
// a run too short for a sample) there is no share: only cpu-µs/op then.
func ReportCPU(b *testing.B, loop func()) {
	b.Helper()
	start := CPUTime()
	share, ok := ServerShare(loop)
	cpu := float64(CPUTime()-start) / float64(time.Microsecond) / float64(b.N)
	b.StopTimer()
	b.ReportMetric(cpu, "cpu-µs/op")
	if !ok {
		if b.N < 100 {
			return // the first, short run: too short for a profile sample
		}
		b.Log("no server share (too short a run for a profile sample, or under -cpuprofile): cpu-µs/op includes the fake's and the receiver's")
		return
	}
	b.ReportMetric(cpu*share, "server-µs/op")
	b.ReportMetric(cpu*(1-share), "ours-µs/op")
}
