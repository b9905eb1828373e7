package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
)

// The system process's settings, from the soak's parent (the rest of the
// functions' settings are the usual environment variables: RETRY_SCHEDULE...).
const (
	envDynamo        = "SOAK_DYNAMODB"
	envSQS           = "SOAK_SQS"
	envAPIAddr       = "SOAK_API_ADDR"
	envSeed          = "SOAK_SEED"
	envFaults        = "SOAK_FAULTS"
	envFaultLog      = "SOAK_FAULT_LOG"
	envSweepEvery    = "SOAK_SWEEP_EVERY"
	envScheduleEvery = "SOAK_SCHEDULE_EVERY"
	envPollers       = "SOAK_POLLERS"
	envBusy          = "SOAK_BUSY"
	envTrace         = "SOAK_TRACE"
)

// runSystem is make dev's runner (every function in one process) with the
// fault decorators around its DynamoDB and SQS clients and its clock. Only
// the soak starts it: no production wiring has these decorators.
func runSystem() error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	seed, _ := strconv.ParseUint(os.Getenv(envSeed), 10, 64)
	scale, _ := strconv.ParseFloat(os.Getenv(envFaults), 64)
	sweepEvery, err := time.ParseDuration(os.Getenv(envSweepEvery))
	if err != nil {
		return err
	}
	scheduleEvery, err := time.ParseDuration(os.Getenv(envScheduleEvery))
	if err != nil {
		return err
	}
	pollers, _ := strconv.Atoi(os.Getenv(envPollers))
	f, err := newFaults(defaultRates(scale), seed, os.Getenv(envFaultLog))
	if err != nil {
		return err
	}
	clk := &clock{}
	lanes := map[string]string{cfg.QueueURL: "fast", cfg.SlowQueueURL: "slow", cfg.PacedQueueURL: "paced", cfg.DLQURL: "dlq"}
	tr, err := newTracer(os.Getenv(envTrace), lanes, clk)
	if err != nil {
		return err
	}
	clk.t = tr
	db, q := emulator.Clients(os.Getenv(envDynamo), os.Getenv(envSQS))
	busy, _ := strconv.Atoi(os.Getenv(envBusy))
	qc := queueClient{SQS: q, f: f, t: tr, busy: busy, notBusy: map[string]bool{cfg.SlowQueueURL: true, cfg.DLQURL: true}}
	a := app.New(cfg, dynamo{db, f, tr}, qc, os.Stderr, "local").WithClock(clk.Now)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go clk.jumps(ctx, f)
	// The slow and paced lanes at a quarter of the fast lane's, as make
	// dev's, but at least 2: an SQS event source mapping's maximum
	// concurrency is 2 at the least (the stack's defaults are 50), and one
	// invocation, held by a batch's hanging attempt, left the slow lane's
	// messages up to a minute past their due time.
	lane := max(pollers/4, 2)
	l, err := runner.Start(ctx, a, runner.Options{APIAddr: os.Getenv(envAPIAddr), SweepEvery: sweepEvery, ScheduleEvery: scheduleEvery,
		Pollers: pollers, SlowPollers: lane, PacedPollers: lane})
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	<-ctx.Done()
	l.Stop()
	return nil
}
