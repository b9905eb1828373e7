// Command dev runs the whole system on this machine (make dev): the DynamoDB
// and SQS emulators on loopback, every function in this process behind the
// same handlers as in Lambda, and a demo receiver that verifies and prints
// what it gets. `dev invoke <fn> <event.json>` invokes one function with a
// sample event against the running system (make invoke).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "invoke" {
		if err := invoke(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "invoke:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

// settings are make dev's own knobs, beside the functions' (shared/config).
type settings struct {
	apiAddr, receiverAddr, dynamoAddr, sqsAddr string
	dataDir, prefix, devKey                    string
	sweepEvery                                 time.Duration
	pollers, slowPollers, pacedPollers         int
	inMemory                                   bool // EMULATORS_IN_MEMORY=1: the emulators keep nothing on disk
	// STATS=off: no table stream and no stats (make load-targets: dynoxide's
	// stream slows a busy table's writes; the deployed stream costs none).
	stats bool
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func loadSettings() (settings, error) {
	root, err := emulator.ModuleRoot()
	if err != nil {
		return settings{}, err
	}
	s := settings{
		apiAddr: getenv("API_ADDR", "127.0.0.1:8080"), receiverAddr: getenv("RECEIVER_ADDR", "127.0.0.1:9000"),
		dynamoAddr: getenv("DYNAMODB_ADDR", "127.0.0.1:8000"), sqsAddr: getenv("SQS_ADDR", "127.0.0.1:4566"),
		dataDir: getenv("DATA_DIR", filepath.Join(root, "localstack", ".data")), prefix: getenv("RESOURCE_PREFIX", "gifq-webhooks-dev"),
		devKey: os.Getenv("DEV_API_KEY"), inMemory: os.Getenv("EMULATORS_IN_MEMORY") == "1", stats: os.Getenv("STATS") != "off",
	}
	for name, n := range map[string]*int{"POLLERS": &s.pollers, "SLOW_POLLERS": &s.slowPollers, "PACED_POLLERS": &s.pacedPollers} {
		if v := os.Getenv(name); v != "" {
			if *n, err = strconv.Atoi(v); err != nil {
				return s, fmt.Errorf("%s=%q: %w", name, v, err)
			}
		}
	}
	s.sweepEvery, err = time.ParseDuration(getenv("SWEEP_INTERVAL", "15m"))
	return s, err
}

// ownAddrs are the addresses make dev itself listens on: the emulators' too
// unless AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS name running ones.
func ownAddrs(s settings) settings {
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" && os.Getenv("AWS_ENDPOINT_URL_SQS") != "" {
		s.dynamoAddr, s.sqsAddr = "", ""
	}
	return s
}

// devConfig is the functions' config for local running: private endpoints
// and plain http allowed, metrics off; everything else as deployed unless
// the environment says otherwise.
func devConfig(s settings, urls queue.URLs) (config.Config, error) {
	defaults := map[string]string{
		"STAGE": "local", "TABLE_NAME": s.prefix, "QUEUE_URL": urls.Delivery, "SLOW_QUEUE_URL": urls.Slow, "PACED_QUEUE_URL": urls.Paced, "DLQ_URL": urls.DLQ,
		"ALLOW_PRIVATE_ENDPOINTS": "true", "ALLOWED_SCHEMES": "http,https", "METRICS": "off",
		"PORTAL_URL": "http://" + s.apiAddr + "/portal/",
	}
	return config.Parse(func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return defaults[k]
	})
}

// connect starts the emulators unless AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_SQS point at running ones, and makes the table and queues.
func connect(ctx context.Context, s *settings, start bool) (*app.App, *emulator.Emulators, error) {
	dynamoURL, sqsURL := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), os.Getenv("AWS_ENDPOINT_URL_SQS")
	var emu *emulator.Emulators
	if dynamoURL != "" && sqsURL != "" {
		s.dynamoAddr, s.sqsAddr = strings.TrimPrefix(dynamoURL, "http://"), strings.TrimPrefix(sqsURL, "http://")
	} else {
		dynamoURL, sqsURL = "http://"+s.dynamoAddr, "http://"+s.sqsAddr
		if start {
			var err error
			emuDir := s.dataDir
			if s.inMemory {
				emuDir = "" // throwaway runs (make load-targets LOAD_MEMORY=1): no SQLite file, no queue files
			}
			emu, err = emulator.Start(ctx, emulator.Options{DataDir: emuDir, Dynoxide: os.Getenv("DYNOXIDE"), DynamoDBAddr: s.dynamoAddr, SQSAddr: s.sqsAddr, Log: os.Stderr, KMS: true})
			if err != nil {
				return nil, nil, err
			}
		}
	}
	db, q := emulator.Clients(dynamoURL, sqsURL)
	if err := store.CreateTable(ctx, db, s.prefix, s.stats); err != nil {
		return nil, emu, fmt.Errorf("table (is `make dev` running?): %w", err)
	}
	urls, err := queue.CreateQueues(ctx, q, s.prefix)
	if err != nil {
		return nil, emu, fmt.Errorf("queues: %w", err)
	}
	cfg, err := devConfig(*s, urls)
	if err != nil {
		return nil, emu, err
	}
	a := app.New(cfg, db, q, os.Stderr, "local")
	if emu != nil && emu.KMSURL != "" {
		// Signing secrets sealed as on AWS, under a key of the KMS emulator.
		k := emulator.KMSClient(emu.KMSURL)
		keyID, err := emulator.EnsureKey(ctx, k, "alias/"+s.prefix)
		if err != nil {
			return nil, emu, fmt.Errorf("kms key: %w", err)
		}
		a.UseKMS(k, keyID)
	}
	if err := useLocalStackDestinations(ctx, a, os.Getenv("LOCALSTACK_ENDPOINT")); err != nil {
		return nil, emu, err
	}
	return a, emu, nil
}

// statsStream is the table's stream, for the stats function's poller (a
// table made before streams were enabled has none: no stats, with a note).
func statsStream(ctx context.Context, s settings) (runner.Streams, string, error) {
	if !s.stats {
		return nil, "", nil
	}
	url := "http://" + s.dynamoAddr
	db, _ := emulator.Clients(url, "http://"+s.sqsAddr)
	arn, err := emulator.TableStream(ctx, db, s.prefix)
	if err != nil || arn == "" {
		fmt.Fprintln(os.Stderr, "stats: the table has no stream (made before stats; remove DATA_DIR to start afresh)", err)
		return nil, "", nil
	}
	return emulator.StreamsClient(url), arn, nil
}

func run() error {
	s, err := loadSettings()
	if err != nil {
		return err
	}
	app.TuneGC(os.Getenv) // the functions' collector settings (shared/app/gc.go)
	if err := servePprof(os.Getenv("GIFQ_PPROF_ADDR")); err != nil {
		return err
	}
	if r, ok := readRunning(s.dataDir); ok && isUp(r, processAlive, tcpAnswers) {
		return alreadyRunning(r)
	}
	if err := busyPorts(ownAddrs(s), canListen); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, emu, err := connect(ctx, &s, true)
	if emu != nil {
		defer emu.Stop()
	}
	if err != nil {
		return err
	}
	key, err := bootstrap(ctx, a, s)
	if err != nil {
		return err
	}
	recv, err := startReceiver(ctx, a, s.receiverAddr, key.accountID)
	if err != nil {
		return err
	}
	defer recv.Close()
	epID, err := ensureDemoEndpoint(ctx, a, key.accountID, recv.URL)
	if err != nil {
		return err
	}
	streams, streamARN, err := statsStream(ctx, s)
	if err != nil {
		return err
	}
	l, err := runner.Start(ctx, a, runner.Options{APIAddr: s.apiAddr, Pollers: s.pollers, SlowPollers: s.slowPollers, PacedPollers: s.pacedPollers, SweepEvery: s.sweepEvery,
		Streams: streams, StreamARN: streamARN})
	if err != nil {
		return err
	}
	portalLink, err := devPortalLink(ctx, a, key.secret)
	if err != nil {
		return err
	}
	if err := writeRunning(s.dataDir, running{
		PID: os.Getpid(), API: l.URL, Receiver: recv.URL, DynamoDB: s.dynamoAddr, SQS: s.sqsAddr,
		Prefix: s.prefix, DataDir: s.dataDir, Started: time.Now(),
	}); err != nil {
		return err
	}
	defer removeRunning(s.dataDir, os.Getpid())
	banner(s, a, key.secret, recv.URL, epID, l.URL, portalLink)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "\nstopping (data kept in "+s.dataDir+")")
	l.Stop()
	return nil
}

func banner(s settings, a *app.App, key, receiverURL, epID, apiURL, portalLink string) {
	fmt.Printf(`
gifq-webhooks is running (stage %s)
  API            %s
  demo receiver  %s  (endpoint %s: verifies signatures, prints each delivery)
  DynamoDB       http://%s    data in %s
  SQS queues     %s
                 %s (dead letters)
  retry schedule %v, %d attempts; rate limit %g/s per account; sweeper every %s
  API key        %s

Send a first event:

  curl -s -X POST %s/v1/events \
    -H "Authorization: Bearer %s" \
    -H "Content-Type: application/json" \
    -d '{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123"}}'

and watch it in the customer portal (a 24-hour session of the dev account):

  %s

Then look it up: curl -s %s/v1/events/<id> -H "Authorization: Bearer %s"
make invoke finds this make dev (%s); Ctrl-C stops everything; data survives a restart.

`, a.Config.Stage, apiURL, receiverURL, epID, s.dynamoAddr, s.dataDir, a.Config.QueueURL, a.Config.DLQURL, a.Config.Retry.Waits,
		a.Config.Retry.MaxAttempts(), a.Config.RatePerSecond, s.sweepEvery, key, apiURL, key, portalLink, apiURL, key, statePath(s.dataDir))
}

// invoke runs one function with a sample event against the running system.
func invoke(args []string) error {
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("usage: dev invoke <api|deliver|sweeper|redrive> <event.json>")
	}
	fn, path := fs.Arg(0), fs.Arg(1)
	event, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s, err := loadSettings()
	if err != nil {
		return err
	}
	if s, err = findRunning(s, os.Getenv); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	a, _, err := connect(ctx, &s, false)
	if err != nil {
		return err
	}
	// The API samples carry ${DEV_API_KEY}: use make dev's key.
	if key, err := bootstrap(ctx, a, s); err == nil {
		event = bytes.ReplaceAll(event, []byte("${DEV_API_KEY}"), []byte(key.secret))
	}
	out, err := runner.Invoke(ctx, a, fn, event)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}
