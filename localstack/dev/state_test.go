package main

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestRunningRoundTripsAndIsRemovedOnlyByItsWriter(t *testing.T) {
	dir := t.TempDir()
	if _, ok := readRunning(dir); ok {
		t.Fatal("an empty data folder reads as a running make dev")
	}
	r := running{PID: 4242, API: "http://127.0.0.1:8080", Receiver: "http://127.0.0.1:9000/webhooks",
		DynamoDB: "127.0.0.1:8000", SQS: "127.0.0.1:4566", Prefix: "gifq-webhooks-dev", DataDir: dir, Started: time.Unix(1, 0).UTC()}
	if err := writeRunning(dir, r); err != nil {
		t.Fatal(err)
	}
	got, ok := readRunning(dir)
	if !ok || got != r {
		t.Fatalf("read %+v, %v; want %+v", got, ok, r)
	}
	removeRunning(dir, 4243) // a second make dev that refused to start
	if _, ok := readRunning(dir); !ok {
		t.Fatal("another pid removed the running make dev's dev.json")
	}
	removeRunning(dir, 4242)
	if _, err := os.Stat(statePath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dev.json after its writer stopped: %v", err)
	}
}

func TestRunningIgnoresAGarbledFile(t *testing.T) {
	dir := t.TempDir()
	for _, raw := range []string{"", "{", `{"pid":0}`, `{"api":"x"}`} {
		if err := os.WriteFile(statePath(dir), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		if r, ok := readRunning(dir); ok {
			t.Errorf("%q reads as running: %+v", raw, r)
		}
	}
}

func TestIsUpNeedsTheProcessAndItsEmulator(t *testing.T) {
	r := running{PID: 7, DynamoDB: "127.0.0.1:8000"}
	yes := func(int) bool { return true }
	no := func(int) bool { return false }
	answers := func(addr string) bool { return addr == "127.0.0.1:8000" }
	silent := func(string) bool { return false }
	if !isUp(r, yes, answers) {
		t.Error("alive and answering: not up")
	}
	if isUp(r, no, answers) {
		t.Error("a dead pid (kill -9 left dev.json) is up")
	}
	if isUp(r, yes, silent) {
		t.Error("a pid reused by another program (nothing on the port) is up")
	}
}

func TestAlreadyRunningNamesItsPortsAndPID(t *testing.T) {
	msg := alreadyRunning(running{PID: 4242, API: "http://127.0.0.1:8080", Receiver: "http://127.0.0.1:9000/webhooks",
		DynamoDB: "127.0.0.1:8000", SQS: "127.0.0.1:4566", DataDir: "/d"}).Error()
	for _, w := range []string{"already running (pid 4242", "API http://127.0.0.1:8080", "DynamoDB 127.0.0.1:8000", "SQS 127.0.0.1:4566", "kill 4242",
		"API_ADDR=127.0.0.1:8081 RECEIVER_ADDR=127.0.0.1:9001 DYNAMODB_ADDR=127.0.0.1:8001 SQS_ADDR=127.0.0.1:4567 DATA_DIR="} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q does not say %q", msg, w)
		}
	}
}

func TestBusyPortsNamesTheVariables(t *testing.T) {
	s := settings{apiAddr: "127.0.0.1:8080", receiverAddr: "127.0.0.1:9000", dynamoAddr: "127.0.0.1:8000", sqsAddr: "127.0.0.1:4566"}
	if err := busyPorts(s, func(string) bool { return true }); err != nil {
		t.Fatalf("all free: %v", err)
	}
	err := busyPorts(s, func(addr string) bool { return addr != "127.0.0.1:8000" && addr != "127.0.0.1:9000" })
	if err == nil {
		t.Fatal("two busy ports: no error")
	}
	for _, w := range []string{"127.0.0.1:8000 (DYNAMODB_ADDR)", "127.0.0.1:9000 (RECEIVER_ADDR)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not name %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "API_ADDR") {
		t.Errorf("%q names a free port", err)
	}
	s.dynamoAddr, s.sqsAddr = "", "" // emulators started elsewhere (AWS_ENDPOINT_URL_*)
	if err := busyPorts(s, func(addr string) bool { return addr != "" }); err != nil {
		t.Errorf("no emulator addresses of its own: %v", err)
	}
}

func TestFromRunningTakesItsAddressesUnlessTheEnvironmentNamesThem(t *testing.T) {
	s := settings{dynamoAddr: "127.0.0.1:8000", sqsAddr: "127.0.0.1:4566", prefix: "gifq-webhooks-dev"}
	r := running{DynamoDB: "127.0.0.1:18000", SQS: "127.0.0.1:14566", Prefix: "other"}
	got := fromRunning(s, r, func(string) string { return "" })
	if got.dynamoAddr != r.DynamoDB || got.sqsAddr != r.SQS || got.prefix != "other" {
		t.Errorf("no environment: %+v", got)
	}
	env := map[string]string{"DYNAMODB_ADDR": "127.0.0.1:8000"}
	got = fromRunning(s, r, func(k string) string { return env[k] })
	if got.dynamoAddr != "127.0.0.1:8000" || got.sqsAddr != r.SQS {
		t.Errorf("DYNAMODB_ADDR set: %+v", got)
	}
}

func TestFindRunningSaysWhenNoDevRuns(t *testing.T) {
	s := settings{dataDir: t.TempDir()}
	_, err := findRunning(s, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "no make dev is running") {
		t.Fatalf("err = %v", err)
	}
	env := map[string]string{"DYNAMODB_ADDR": "127.0.0.1:1", "SQS_ADDR": "127.0.0.1:2"}
	if _, err := findRunning(s, func(k string) string { return env[k] }); err != nil {
		t.Errorf("explicit addresses: %v", err)
	}
}
