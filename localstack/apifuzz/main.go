// Command apifuzz runs Schemathesis against the api function (make apifuzz):
// it starts the emulators (in memory, free loopback ports), makes the table,
// the queues and an account with a key, serves the api function behind the
// same API Gateway adapter as make dev on a free loopback port, runs the
// schemathesis command given after "--" with the API's URL and key, and
// stops everything. It exits with Schemathesis's code.
//
// The api runs with the deployed stack's URL policy (https only, no private
// or loopback address) but without DNS at registration, and no deliver
// worker runs: the endpoints the fuzzer registers point anywhere, and
// nothing may be sent off this machine. Deliveries stay pending, which the
// API reads, resends (queued) and recovers like any other.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: apifuzz -- schemathesis run [options]   ({url} and {key} in the options are filled in)")
		os.Exit(2)
	}
	code, err := run(context.Background(), args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apifuzz:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(ctx context.Context, command []string) (int, error) {
	emu, err := emulator.Start(ctx, emulator.Options{KMS: true}) // secrets sealed and v1a keys, as deployed
	if err != nil {
		return 0, err
	}
	defer emu.Stop()
	db, q := emulator.Clients(emu.DynamoDBURL, emu.SQSURL)
	const table = "gifq-webhooks-apifuzz"
	if err := store.CreateTable(ctx, db, table, false); err != nil {
		return 0, err
	}
	urls, err := queue.CreateQueues(ctx, q, table)
	if err != nil {
		return 0, err
	}
	env := map[string]string{"TABLE_NAME": table, "QUEUE_URL": urls.Delivery, "DLQ_URL": urls.DLQ, "METRICS": "off", "LOG_LEVEL": "warn",
		// The portal links the sessions answer name a page nobody opens here.
		"PORTAL_URL": "http://127.0.0.1/portal/"}
	cfg, err := config.Parse(func(k string) string { return env[k] })
	if err != nil {
		return 0, err
	}
	a := app.New(cfg, db, q, os.Stderr, "api")
	k := emulator.KMSClient(emu.KMSURL)
	keyID, err := emulator.EnsureKey(ctx, k, "alias/"+table)
	if err != nil {
		return 0, fmt.Errorf("kms key: %w", err)
	}
	a.UseKMS(k, keyID)
	acct, err := a.Store.CreateAccount(ctx, "apifuzz", 0)
	if err != nil {
		return 0, err
	}
	_, key, err := a.Store.CreateAPIKey(ctx, acct.ID)
	if err != nil {
		return 0, err
	}
	// One endpoint from the start, so the fuzzer's events have deliveries to read.
	now := domain.Millis(time.Now())
	if err := a.Store.CreateEndpoint(ctx, domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct.ID, URL: "https://hooks.example.test/apifuzz",
		Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: now}}, CreatedAt: now, UpdatedAt: now}); err != nil {
		return 0, err
	}
	api := a.API()
	api.Resolver = nil // no DNS for the fuzzer's host names: nothing leaves this machine
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: &runner.APIGateway{Handler: runner.Concurrent(api.Handle), Stage: "apifuzz", MaxBody: 10 << 20}}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(os.Stderr, "apifuzz: api on %s (emulators %s, %s)\n", base, emu.DynamoDBURL, emu.SQSURL)

	fill := strings.NewReplacer("{url}", base, "{key}", key)
	argv := make([]string, len(command))
	for i, c := range command {
		argv[i] = fill.Replace(c)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}
