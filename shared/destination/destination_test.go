package destination

import (
	"context"
	"errors"
	"testing"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/sender"
)

// recorder is a provider that answers with a fixed status and remembers
// what it was asked.
type recorder struct {
	status int
	got    []sender.Request
}

func (r *recorder) Validate(domain.Destination) error               { return errors.New("validated") }
func (r *recorder) Check(context.Context, domain.Destination) error { return errors.New("checked") }
func (r *recorder) Send(_ context.Context, q sender.Request) sender.Result {
	r.got = append(r.got, q)
	return sender.Result{Result: retry.Result{StatusCode: r.status}}
}

func TestRouterPicksTheProviderByType(t *testing.T) {
	web, sqs := &recorder{status: 204}, &recorder{status: 200}
	r := NewRouter(HTTP{Sender: web}).Register(sqs, domain.DestinationSQS)
	if res := r.Send(context.Background(), sender.Request{URL: "https://example.com/hook"}); res.StatusCode != 204 || len(web.got) != 1 {
		t.Fatalf("a request without a destination is HTTP: %+v", res)
	}
	if res := r.Send(context.Background(), sender.Request{Destination: &domain.Destination{Type: domain.DestinationHTTP}}); res.StatusCode != 204 || len(web.got) != 2 {
		t.Fatalf("type http: %+v", res)
	}
	d := &domain.Destination{Type: domain.DestinationSQS}
	if res := r.Send(context.Background(), sender.Request{Destination: d}); res.StatusCode != 200 || len(sqs.got) != 1 {
		t.Fatalf("aws_sqs: %+v", res)
	}
	if err := r.Validate(d); err == nil || err.Error() != "validated" {
		t.Fatal(err)
	}
	if err := r.Check(context.Background(), d); err == nil || err.Error() != "checked" {
		t.Fatal(err)
	}
	if err := r.Validate(nil); err != nil {
		t.Fatal(err)
	}
}

func TestRouterWithoutTheProvider(t *testing.T) {
	r := NewRouter(HTTP{Sender: &recorder{status: 200}})
	d := &domain.Destination{Type: domain.DestinationSNS}
	var ce *ConfigError
	if err := r.Validate(d); !errors.As(err, &ce) || ce.Field != "type" || r.Supports(domain.DestinationSNS) {
		t.Fatalf("%v", err)
	}
	res := r.Send(context.Background(), sender.Request{Destination: d})
	if retry.Classify(res.Result) != retry.Retry || res.Error == "" {
		t.Fatalf("%+v", res)
	}
}
