package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// comm with a space and a parenthesis, as the kernel writes it.
	line := "4242 (node (fauxqs)) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 11 0 1000 0 0"
	p, ok := parseStat(line)
	if !ok || p.pid != 4242 || p.ppid != 17 || p.comm != "node (fauxqs)" || p.cpu != 3250*time.Millisecond {
		t.Fatalf("parseStat = %+v, %v; want pid 4242, ppid 17, comm %q, cpu 3.25s", p, ok, "node (fauxqs)")
	}
	if _, ok := parseStat("garbage"); ok {
		t.Fatal("parseStat accepted a line without comm")
	}
}

func TestListeningInode(t *testing.T) {
	listen := "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 98765 1 0000000000000000 100 0 0 10 0"
	if ino, ok := listeningInode(listen, 8080); !ok || ino != "98765" {
		t.Fatalf("listeningInode = %q, %v; want 98765", ino, ok)
	}
	if _, ok := listeningInode(listen, 8081); ok {
		t.Fatal("matched another port")
	}
	established := "   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 11111 1 0000000000000000 100 0 0 10 0"
	if _, ok := listeningInode(established, 8080); ok {
		t.Fatal("matched a connection that is not listening")
	}
}

// listen opens a loopback port in this process for the test's length.
func listen(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// The tree of this test process: it listens, so it is "ours", and the CPU
// it burns between two samples shows.
func TestSampleTreeFindsTheListener(t *testing.T) {
	port := listen(t)
	pid, err := listenerPID(port)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("listenerPID = %d, %v; want this process %d", pid, err, os.Getpid())
	}
	a, err := sampleTree(port)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	b, _ := sampleTree(port)
	if b.sub(a).ours <= 0 {
		t.Fatalf("300 ms of busy loop not seen: %v then %v", a.ours, b.ours)
	}
}

// A child of the listening process is an emulator, counted under its name.
func TestSampleTreeCountsEachChildByName(t *testing.T) {
	port := listen(t)
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	a, err := sampleTree(port)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	b, _ := sampleTree(port)
	used := b.sub(a)
	if used.emulator["sh"] <= 0 || used.emulators != used.emulator["sh"] {
		t.Fatalf("a busy child: %v by name, %v in all; want all of it under sh", used.emulator, used.emulators)
	}
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) }
	if s := used.split(ms); !strings.HasPrefix(s, "sh ") {
		t.Fatalf("split = %q; want it to name sh", s)
	}
}
