package destination

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gifq/webhooks/shared/domain"
)

// recorder is a provider that answers with a fixed verdict and remembers
// what it was asked.
type recorder struct {
	types   []domain.DestinationType
	verdict Verdict
	got     []Request
}

func (r *recorder) Schemas() []Schema {
	var out []Schema
	for _, t := range r.types {
		out = append(out, Schema{Type: t})
	}
	return out
}
func (r *recorder) Validate(domain.Destination) error               { return errors.New("validated") }
func (r *recorder) Check(context.Context, domain.Destination) error { return errors.New("checked") }
func (r *recorder) Send(_ context.Context, q Request) Outcome {
	r.got = append(r.got, q)
	return Outcome{Verdict: r.verdict}
}

func TestRouterPicksTheProviderByType(t *testing.T) {
	web := &recorder{types: []domain.DestinationType{domain.DestinationHTTP}, verdict: Delivered}
	sqs := &recorder{types: []domain.DestinationType{domain.DestinationSQS, "aws_other"}, verdict: Gone}
	r := NewRouter(web, sqs)
	if res := r.Send(context.Background(), Request{URL: "https://example.com/hook"}); res.Verdict != Delivered || len(web.got) != 1 {
		t.Fatalf("a request without a destination is HTTP: %+v", res)
	}
	if res := r.Send(context.Background(), Request{Destination: &domain.Destination{Type: domain.DestinationHTTP}}); res.Verdict != Delivered || len(web.got) != 2 {
		t.Fatalf("type http: %+v", res)
	}
	d := &domain.Destination{Type: domain.DestinationSQS}
	if res := r.Send(context.Background(), Request{Destination: d}); res.Verdict != Gone || len(sqs.got) != 1 {
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
	if got := Types(r.Schemas()); !slices.Equal(got, []string{"http", "aws_other", "aws_sqs"}) {
		t.Fatalf("schemas in order, http first: %v", got)
	}
}

func TestRouterWithoutTheProvider(t *testing.T) {
	r := NewRouter(&recorder{types: []domain.DestinationType{domain.DestinationHTTP}})
	d := &domain.Destination{Type: domain.DestinationSNS}
	var ce *ConfigError
	if err := r.Validate(d); !errors.As(err, &ce) || ce.Field != "type" || r.Supports(domain.DestinationSNS) {
		t.Fatalf("%v", err)
	}
	res := r.Send(context.Background(), Request{Destination: d})
	if res.Verdict != Retry || res.Class != ClassUnsupported || res.Error == "" {
		t.Fatalf("%+v", res)
	}
}
