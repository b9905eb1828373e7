package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The CPU time of make dev's process tree, read from /proc: the process that
// listens on the API's port is ours (API bridge, ingest, pollers, workers,
// sweeper: all in one process), and its descendants are the emulators
// (dynoxide, the fauxqs node process).

// userHZ is the unit of the utime and stime fields of /proc/<pid>/stat: the
// kernel exposes them in USER_HZ, which is 100 on every Linux architecture
// Go supports.
const userHZ = 100

type proc struct {
	pid, ppid int
	comm      string
	cpu       time.Duration // user + system, this process's threads only
}

// cpuSample is the CPU time used so far by our process and by the emulators,
// in all and by process name (dynoxide: DynamoDB; node: fauxqs, SQS).
type cpuSample struct {
	ours, emulators time.Duration
	emulator        map[string]time.Duration
}

func (a cpuSample) sub(b cpuSample) cpuSample {
	d := cpuSample{ours: a.ours - b.ours, emulators: a.emulators - b.emulators, emulator: map[string]time.Duration{}}
	for name, t := range a.emulator {
		d.emulator[name] = t - b.emulator[name]
	}
	return d
}

// split is each emulator's share, "dynoxide 4.10, node 2.20", per(d) each.
func (a cpuSample) split(per func(time.Duration) float64) string {
	names := make([]string, 0, len(a.emulator))
	for name := range a.emulator {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		names[i] = fmt.Sprintf("%s %.2f", name, per(a.emulator[name]))
	}
	return strings.Join(names, ", ")
}

// sampleTree reads the tree rooted at the process listening on port.
func sampleTree(port int) (cpuSample, error) {
	root, err := listenerPID(port)
	if err != nil {
		return cpuSample{}, err
	}
	procs, err := readProcs()
	if err != nil {
		return cpuSample{}, err
	}
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	s := cpuSample{ours: procs[root].cpu, emulator: map[string]time.Duration{}}
	stack := append([]int(nil), children[root]...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s.emulators += procs[pid].cpu
		s.emulator[procs[pid].comm] += procs[pid].cpu
		stack = append(stack, children[pid]...)
	}
	return s, nil
}

func readProcs() (map[int]proc, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	out := map[int]proc{}
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		if p, ok := parseStat(string(b)); ok {
			out[p.pid] = p
		}
	}
	return out, nil
}

// parseStat reads pid, comm, ppid, utime and stime from a /proc/<pid>/stat
// line. comm is in parentheses and may itself hold spaces and parentheses.
func parseStat(line string) (proc, bool) {
	open, closing := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return proc{}, false
	}
	// After comm: state(3) ppid(4) ... utime(14) stime(15).
	f := strings.Fields(line[closing+1:])
	if len(f) < 13 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return proc{pid: pid, ppid: ppid, comm: line[open+1 : closing], cpu: time.Duration(ut+st) * time.Second / userHZ}, true
}

// listenerPID finds the process holding the listening TCP socket on port
// (IPv4 or IPv6), through /proc/net/tcp{,6} and the processes' fd links.
func listenerPID(port int) (int, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if ino, ok := listeningInode(sc.Text(), port); ok {
				inodes[ino] = true
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("nothing listens on port %d (is make dev running?)", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, fmt.Errorf("no process of ours holds the socket on port %d", port)
}

// listeningInode parses one /proc/net/tcp line: "sl local rem st ... inode".
func listeningInode(line string, port int) (string, bool) {
	f := strings.Fields(line)
	if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
		return "", false
	}
	i := strings.LastIndexByte(f[1], ':')
	p, err := strconv.ParseInt(f[1][i+1:], 16, 32)
	if i < 0 || err != nil || int(p) != port {
		return "", false
	}
	return f[9], true
}
