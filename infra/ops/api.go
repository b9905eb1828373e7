package main

// The commands that look at and act on deliveries go through the API, with
// the generated client (shared/apiclient), as a customer would: the API's
// rules (30-day resend window, account scoping, the rate limit) apply to
// ops too. They take the account's API key from $GIFQ_API_KEY, never from a
// flag (it would land in the shell history and the process list); make a
// key for the account with `key create` and revoke it after.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gifq/webhooks/shared/apiclient"
)

const apiUsage = `  (with -api URL or $GIFQ_API_URL, and the account's key in $GIFQ_API_KEY)
  event show -id EVENT_ID
  delivery show -id DELIVERY_ID
  delivery resend -id DELIVERY_ID
  endpoint recover -id ENDPOINT_ID -since RFC3339 [-until RFC3339]
  endpoint replay -id ENDPOINT_ID -since RFC3339 [-until RFC3339]`

// isAPICommand says whether the command goes through the API.
func isAPICommand(resource string) bool {
	return resource == "event" || resource == "delivery" || resource == "endpoint"
}

func runAPI(ctx context.Context, apiURL string, args []string, out io.Writer) error {
	key := os.Getenv("GIFQ_API_KEY")
	if apiURL == "" || key == "" {
		return errors.New("API commands need -api URL (or $GIFQ_API_URL) and $GIFQ_API_KEY\n" + apiUsage)
	}
	c, err := apiclient.NewClientWithResponses(apiURL, apiclient.WithBearer(key))
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet(args[0]+" "+args[1], flag.ContinueOnError)
	id := fs.String("id", "", "the object's id")
	since := fs.String("since", "", "RFC 3339")
	until := fs.String("until", "", "RFC 3339 (default now)")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	if *id == "" {
		return errors.New(args[0] + " " + args[1] + " needs -id")
	}
	switch args[0] + " " + args[1] {
	case "event show":
		r, err := c.GetEventWithResponse(ctx, *id)
		if err != nil {
			return err
		}
		if r.JSON200 == nil {
			return apiError(r.StatusCode(), r.Body)
		}
		ev := r.JSON200
		fmt.Fprintf(out, "event %s  %s  received %s  %d deliveries\n", ev.Id, ev.Event, ev.ReceivedAt.Format(time.RFC3339), len(ev.Deliveries))
		for _, d := range ev.Deliveries {
			printDelivery(out, d)
		}
	case "delivery show":
		r, err := c.GetDeliveryWithResponse(ctx, *id)
		if err != nil {
			return err
		}
		if r.JSON200 == nil {
			return apiError(r.StatusCode(), r.Body)
		}
		printDelivery(out, *r.JSON200)
	case "delivery resend":
		r, err := c.ResendDeliveryWithResponse(ctx, *id)
		if err != nil {
			return err
		}
		if r.JSON202 == nil {
			return apiError(r.StatusCode(), r.Body)
		}
		fmt.Fprintf(out, "resend of %s queued as attempt %s\n", r.JSON202.DeliveryId, r.JSON202.AttemptId)
	case "endpoint recover":
		body, err := recoverWindow(*since, *until)
		if err != nil {
			return err
		}
		r, err := c.RecoverEndpointWithResponse(ctx, *id, body)
		if err != nil {
			return err
		}
		if r.JSON202 == nil {
			return apiError(r.StatusCode(), r.Body)
		}
		more := ""
		if r.JSON202.More {
			more = " (more left: run it again)"
		}
		fmt.Fprintf(out, "recovered %d failed deliveries of %s%s\n", r.JSON202.Recovered, *id, more)
	case "endpoint replay":
		w, err := recoverWindow(*since, *until)
		if err != nil {
			return err
		}
		return replayAll(ctx, c, *id, apiclient.ReplayEndpointJSONRequestBody{Since: w.Since, Until: w.Until}, out)
	default:
		return errors.New(usage + "\n" + apiUsage)
	}
	return nil
}

// replayAll replays the whole window: one call after another from each
// answer's cursor, each at most 100 deliveries (the API's bound).
func replayAll(ctx context.Context, c *apiclient.ClientWithResponses, id string, body apiclient.ReplayEndpointJSONRequestBody, out io.Writer) error {
	var scanned, replayed, calls int
	for {
		r, err := c.ReplayEndpointWithResponse(ctx, id, body)
		if err != nil {
			return err
		}
		if r.JSON202 == nil {
			return apiError(r.StatusCode(), r.Body)
		}
		calls++
		scanned, replayed = scanned+r.JSON202.Scanned, replayed+r.JSON202.Replayed
		if !r.JSON202.More || r.JSON202.NextCursor == nil {
			break
		}
		body.Cursor = r.JSON202.NextCursor
	}
	fmt.Fprintf(out, "replayed %d missed events to %s (%d events looked at, %d calls)\n", replayed, id, scanned, calls)
	return nil
}

func recoverWindow(since, until string) (apiclient.RecoverEndpointJSONRequestBody, error) {
	var body apiclient.RecoverEndpointJSONRequestBody
	var err error
	if body.Since, err = time.Parse(time.RFC3339, since); err != nil {
		return body, fmt.Errorf("-since must be RFC 3339: %w", err)
	}
	if until != "" {
		u, err := time.Parse(time.RFC3339, until)
		if err != nil {
			return body, fmt.Errorf("-until must be RFC 3339: %w", err)
		}
		body.Until = &u
	}
	return body, nil
}

func printDelivery(out io.Writer, d apiclient.DeliveryWithAttempts) {
	fmt.Fprintf(out, "delivery %s  endpoint %s  %s  attempts %d  series %d", d.Id, d.EndpointId, d.Status, d.AttemptCount, d.Series)
	if d.FailReason != nil {
		fmt.Fprintf(out, "  reason %s", *d.FailReason)
	}
	if d.NextAttemptAt != nil {
		fmt.Fprintf(out, "  next %s", d.NextAttemptAt.Format(time.RFC3339))
	}
	fmt.Fprintln(out)
	for _, a := range d.Attempts {
		result := a.Outcome
		if a.StatusCode != nil {
			result = fmt.Sprintf("%d %s", *a.StatusCode, a.Outcome)
		} else if a.ErrorClass != nil {
			result = *a.ErrorClass + " " + a.Outcome
		}
		fmt.Fprintf(out, "  %s  %-6s series %d #%d  %5d ms  %s\n", a.StartedAt.Format(time.RFC3339), a.Kind, a.Series, deref(a.Number), a.DurationMs, result)
	}
}

func apiError(status int, body []byte) error {
	return fmt.Errorf("the API answered %d: %s", status, body)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
