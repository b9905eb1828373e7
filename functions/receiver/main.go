// Command receiver is the optional demo receiver (context demoReceiver):
// a function URL that verifies each webhook's signature and logs it.
package main

import (
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/demoreceiver"
	"github.com/gifq/webhooks/shared/obs"
)

func main() {
	obs.StartTracing() // X-Ray subsegments for its JWKS fetches, with Active tracing
	var secrets []string
	for _, s := range strings.Split(os.Getenv("WEBHOOK_SECRETS"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	r := &demoreceiver.Receiver{
		APIURL: os.Getenv("API_URL"), Secrets: secrets,
		HTTP: &http.Client{Timeout: 5 * time.Second, Transport: obs.TracedTransport(http.DefaultTransport)},
		Log:  obs.NewLogger(os.Stdout, slog.LevelInfo, "receiver"), Now: time.Now,
	}
	lambda.Start(r.Handle)
}
