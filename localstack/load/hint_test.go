package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLatencyHint(t *testing.T) {
	makeLoad := options{events: 300, accounts: 10, rate: 50} // make load's default: 5/s per account, the contract's limit
	for _, c := range []struct {
		name string
		o    options
		p99  time.Duration
		want string
	}{
		{"a first run against a fresh make dev", makeLoad, 1420 * time.Millisecond, "posted to at 5/s against its limit of 5/s"},
		{"the second run", makeLoad, 36700 * time.Microsecond, ""},
		{"the limit lifted", options{accounts: 10, rate: 50, accountRate: 1000}, 1420 * time.Millisecond, ""},
		{"well under the limit", options{accounts: 10, rate: 20}, 1420 * time.Millisecond, ""},
		{"unpaced", options{accounts: 1, rate: 0}, 2 * time.Second, "posted to unpaced"},
	} {
		got := latencyHint(c.o, c.p99)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: hint %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRunningDevReadsDevJSON(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		if k == "DATA_DIR" {
			return dir
		}
		return ""
	}
	if got := runningDev(env); got != (dev{API: "http://127.0.0.1:8080", DynamoDB: "http://127.0.0.1:8000", Prefix: "gifq-webhooks-dev"}) {
		t.Errorf("no dev.json: %+v, want make dev's defaults", got)
	}
	raw := `{"pid":1,"api":"http://127.0.0.1:18080","dynamodb":"127.0.0.1:18000","sqs":"127.0.0.1:14566","prefix":"other"}`
	if err := os.WriteFile(filepath.Join(dir, "dev.json"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runningDev(env); got != (dev{API: "http://127.0.0.1:18080", DynamoDB: "http://127.0.0.1:18000", Prefix: "other"}) {
		t.Errorf("dev.json: %+v", got)
	}
}
