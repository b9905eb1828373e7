// Command gifq is the customer's command line. `gifq listen` forwards a
// polling endpoint's events, signed as real deliveries, to a URL on this
// machine (docs/receivers.md). It lives under localstack/ with the other
// things that run on a developer's machine; the logic is shared/listen.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gifq/webhooks/shared/listen"
)

const usage = `usage: gifq listen --endpoint ep_... --forward http://localhost:3000/webhooks [--api URL]
  GIFQ_TOKEN   an API key, a portal token or the endpoint's poll token (required)
  GIFQ_SECRET  the endpoint's signing secret, whsec_... (required)
  GIFQ_API     the API's base URL (default http://127.0.0.1:8080, make dev's)`

func main() {
	if len(os.Args) < 2 || os.Args[1] != "listen" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("listen", flag.ExitOnError)
	api := fs.String("api", envOr("GIFQ_API", "http://127.0.0.1:8080"), "the API's base URL")
	endpoint := fs.String("endpoint", "", "the polling endpoint's id")
	forward := fs.String("forward", "", "where to POST each event: a URL on localhost")
	maxWait := fs.Duration("max-wait", 15*time.Second, "the longest wait between reads when idle")
	_ = fs.Parse(os.Args[2:])
	l := &listen.Listener{API: *api, Token: os.Getenv("GIFQ_TOKEN"), Secret: os.Getenv("GIFQ_SECRET"),
		Endpoint: *endpoint, Forward: *forward, Out: os.Stdout, MaxWait: *maxWait}
	if l.Endpoint == "" || l.Forward == "" || l.Token == "" || l.Secret == "" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	// Ctrl-C ends the run cleanly; a page not wholly forwarded is not
	// committed, so the next run forwards it again.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := l.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gifq listen:", err)
		os.Exit(1)
	}
	fmt.Println("stopped")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
