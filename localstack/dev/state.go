package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// running is what a make dev writes into its data folder while it runs
// (dev.json), so that a second make dev says one is running instead of
// failing on a busy port, and make invoke finds its ports.
type running struct {
	PID      int       `json:"pid"`
	API      string    `json:"api"`      // http://host:port
	Receiver string    `json:"receiver"` // the demo receiver's URL
	DynamoDB string    `json:"dynamodb"` // host:port
	SQS      string    `json:"sqs"`      // host:port
	Prefix   string    `json:"prefix"`   // RESOURCE_PREFIX: the table and queue names
	DataDir  string    `json:"data_dir"`
	Started  time.Time `json:"started"`
}

const stateFile = "dev.json"

func statePath(dataDir string) string { return filepath.Join(dataDir, stateFile) }

// readRunning reads the data folder's dev.json; false when there is none.
func readRunning(dataDir string) (running, bool) {
	raw, err := os.ReadFile(statePath(dataDir))
	if err != nil {
		return running{}, false
	}
	var r running
	if json.Unmarshal(raw, &r) != nil || r.PID <= 0 {
		return running{}, false
	}
	return r, true
}

func writeRunning(dataDir string, r running) error {
	raw, _ := json.MarshalIndent(r, "", "  ")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(statePath(dataDir), raw, 0o644)
}

// removeRunning deletes dev.json if it is this process's (a second make dev
// that refused to start leaves the first one's alone).
func removeRunning(dataDir string, pid int) {
	if r, ok := readRunning(dataDir); ok && r.PID == pid {
		_ = os.Remove(statePath(dataDir))
	}
}

// isUp decides whether the make dev that wrote r still runs: its process
// is alive and its DynamoDB answers. A dev.json left by a killed make dev
// (kill -9, a crash) fails one or the other, also when its pid has been
// given to another process since.
func isUp(r running, alive func(pid int) bool, answers func(addr string) bool) bool {
	return alive(r.PID) && answers(r.DynamoDB)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func tcpAnswers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// alreadyRunning is the second make dev's message.
func alreadyRunning(r running) error {
	return fmt.Errorf(`make dev is already running (pid %d, since %s):
  API %s   demo receiver %s
  DynamoDB %s   SQS %s   data in %s
Use that one (make invoke and make load find it), stop it (Ctrl-C in its terminal, or kill %d),
or start a second one beside it with its own ports and data folder, e.g.
  API_ADDR=%s RECEIVER_ADDR=%s DYNAMODB_ADDR=%s SQS_ADDR=%s DATA_DIR=/tmp/dev2 make dev`,
		r.PID, r.Started.Local().Format("15:04:05"), r.API, r.Receiver, r.DynamoDB, r.SQS, r.DataDir, r.PID,
		nextPort(strings.TrimPrefix(r.API, "http://")), nextPort(hostPort(r.Receiver)), nextPort(r.DynamoDB), nextPort(r.SQS))
}

// hostPort is a URL's host:port.
func hostPort(url string) string {
	if u, err := neturl.Parse(url); err == nil {
		return u.Host
	}
	return url
}

// nextPort is addr with its port plus one, a likely free neighbour.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return addr
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// busyPorts names, for each of make dev's addresses that cannot be listened
// on, the variable that moves it; "" addresses are not make dev's to open.
// listen reports whether addr is free.
func busyPorts(s settings, listen func(addr string) bool) error {
	var busy []string
	for _, p := range []struct{ env, addr string }{
		{"API_ADDR", s.apiAddr}, {"RECEIVER_ADDR", s.receiverAddr}, {"DYNAMODB_ADDR", s.dynamoAddr}, {"SQS_ADDR", s.sqsAddr},
	} {
		if p.addr != "" && !listen(p.addr) {
			busy = append(busy, fmt.Sprintf("%s (%s)", p.addr, p.env))
		}
	}
	if len(busy) == 0 {
		return nil
	}
	return fmt.Errorf("in use by another program (a make dev with another DATA_DIR?): %s; set the variable in brackets to a free host:port",
		strings.Join(busy, ", "))
}

func canListen(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// findRunning points make invoke at the running make dev of s's data
// folder: its emulators' addresses and resource prefix, unless the
// environment names them (DYNAMODB_ADDR, SQS_ADDR, RESOURCE_PREFIX, or the
// AWS_ENDPOINT_URL_* pair).
func findRunning(s settings, getenv func(string) string) (settings, error) {
	if getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" && getenv("AWS_ENDPOINT_URL_SQS") != "" {
		return s, nil
	}
	r, ok := readRunning(s.dataDir)
	if !ok || !isUp(r, processAlive, tcpAnswers) {
		if getenv("DYNAMODB_ADDR") != "" && getenv("SQS_ADDR") != "" {
			return s, nil
		}
		return s, fmt.Errorf("no make dev is running with data in %s (%s): start one with `make dev` in another terminal, "+
			"or set DATA_DIR to its data folder, or DYNAMODB_ADDR and SQS_ADDR to its emulators", s.dataDir, statePath(s.dataDir))
	}
	return fromRunning(s, r, getenv), nil
}

// fromRunning takes r's addresses and prefix where the environment does not
// name its own.
func fromRunning(s settings, r running, getenv func(string) string) settings {
	if getenv("DYNAMODB_ADDR") == "" {
		s.dynamoAddr = r.DynamoDB
	}
	if getenv("SQS_ADDR") == "" {
		s.sqsAddr = r.SQS
	}
	if getenv("RESOURCE_PREFIX") == "" && r.Prefix != "" {
		s.prefix = r.Prefix
	}
	return s
}
