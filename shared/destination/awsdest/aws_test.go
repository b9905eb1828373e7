package awsdest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// One credential cache per role and external id: a second attempt to the
// same role reuses the first one's session; another account's external id
// never shares it.
func TestCredentialsCachedPerRole(t *testing.T) {
	p := &AWS{Base: aws.Config{Region: "eu-west-1"}, Regions: []string{"eu-west-1"}}
	a := domain.Destination{RoleARN: role, ExternalID: "gifq-a"}
	first := p.credentials(a)
	if again := p.credentials(a); again != first {
		t.Fatal("the same role got two caches")
	}
	if p.credentials(domain.Destination{RoleARN: role, ExternalID: "gifq-b"}) == first {
		t.Fatal("two external ids share a cache")
	}
	if p.credentials(domain.Destination{RoleARN: role + "2", ExternalID: "gifq-a"}) == first {
		t.Fatal("two roles share a cache")
	}
}

// A destination that no longer passes the rules (the deployment narrowed
// its regions since it was stored) fails for good without calling AWS.
func TestSendRefusesWhatTheRulesRefuse(t *testing.T) {
	p := &AWS{Base: aws.Config{Region: "eu-west-1"}, Regions: []string{"eu-west-1"}}
	d := &domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:us-east-1:123456789012:q", RoleARN: role, ExternalID: "gifq-a"}
	for _, r := range []destination.Request{{Destination: d}, {}} {
		res := p.Send(context.Background(), r)
		if res.Class != ErrInvalid || res.Verdict != destination.Rejected || res.Error == "" {
			t.Fatalf("%+v", res)
		}
	}
}

// A manual resend to a FIFO target is its own message: deduplicated by
// the attempt, not the delivery, so it is not dropped within 5 minutes of
// the series' send. The series' retries share the delivery's id.
func TestFIFODeduplicationLetsAResendThrough(t *testing.T) {
	series := destination.Request{DeliveryID: "dlv_1", AttemptID: "att_2", AttemptNum: 2}
	if got := DedupID(series); got != "dlv_1" {
		t.Fatalf("a retry of the series: %s", got)
	}
	resend := destination.Request{DeliveryID: "dlv_1", AttemptID: "att_9", AttemptNum: 0}
	if got := DedupID(resend); got != "att_9" {
		t.Fatalf("a resend: %s", got)
	}
}

// U+FFFE and U+FFFF, valid JSON that ingest accepts and SQS refuses,
// go as escapes: the same JSON document; other bodies byte for byte.
func TestMessageBodyEscapesWhatSQSRefuses(t *testing.T) {
	body := []byte("{\"event\":\"a\",\"note\":\"x\uFFFEy\uFFFF\"}")
	got := MessageBody(body)
	if strings.ContainsRune(got, 0xFFFE) || strings.ContainsRune(got, 0xFFFF) || got != `{"event":"a","note":"x\ufffey\uffff"}` {
		t.Fatalf("%q", got)
	}
	var a, b any
	if json.Unmarshal(body, &a) != nil || json.Unmarshal([]byte(got), &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("not the same document: %v %v", a, b)
	}
	plain := []byte(`{"event":"a","é":"\u00e9 ☃"}`)
	if MessageBody(plain) != string(plain) {
		t.Fatal("a body without them changed")
	}
}

// A role in the deployment's own account, stored before the deployment
// named its account, fails for good without an AssumeRole (no STS here:
// reaching it would be a network error, not aws_invalid).
func TestSendRefusesARoleInTheDeploymentsOwnAccount(t *testing.T) {
	p := &AWS{Base: aws.Config{Region: "eu-west-1"}, Regions: []string{"eu-west-1"}, OwnAccount: "123456789012"}
	d := &domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:999999999999:q", RoleARN: role, ExternalID: "gifq-a"}
	if err := p.Validate(*d); err == nil || !strings.Contains(err.Error(), "own AWS account") {
		t.Fatalf("Validate: %v", err)
	}
	res := p.Send(context.Background(), destination.Request{Destination: d})
	if res.Class != ErrInvalid || res.Verdict != destination.Rejected || !strings.Contains(res.Error, "own AWS account") {
		t.Fatalf("%+v", res)
	}
}

// A body that ingest accepts (up to 256 KiB) but that does not fit in an
// SNS message or an EventBridge entry beside our attributes or wrapper is
// refused before any call, as aws_invalid_request (failed at once, not
// retried), saying why; one that fits goes on to the call.
func TestOversizedMessagesFailAtOnceWithTheReason(t *testing.T) {
	body := func(n int) []byte {
		pre := `{"event":"payout.paid","pad":"`
		return []byte(pre + strings.Repeat("x", n-len(pre)-2) + `"}`)
	}
	r := destination.Request{DeliveryID: domain.NewID("dlv"), EventID: domain.NewID("evt"), EventType: "payout.paid",
		AttemptID: domain.NewID("att"), AttemptNum: 1, Body: body(domain.MaxBodyBytes)}
	for name, put := range map[string]func(context.Context, aws.Config, Target, destination.Request) (string, error){
		"SNS": publishSNS, "EventBridge": putEvent,
	} {
		_, err := put(context.Background(), aws.Config{}, Target{}, r)
		var api smithy.APIError
		if !errors.As(err, &api) || api.ErrorCode() != "MessageTooLong" || !strings.Contains(api.ErrorMessage(), name+" takes at most 262144") {
			t.Fatalf("%s: %v", name, err)
		}
		if c := ClassOf(StagePublish, api.ErrorCode(), 400); c != ErrInvalid || VerdictOf(c) != destination.Rejected {
			t.Fatalf("%s: class %s", name, c)
		}
		small := r
		small.Body = body(200 * 1024)
		if _, err := put(context.Background(), aws.Config{}, Target{}, small); errors.As(err, &api) && api.ErrorCode() == "MessageTooLong" {
			t.Fatalf("%s: a 200 KiB body refused as too large", name)
		}
	}
	if n := snsSize(string(r.Body), attributes(r)); n <= domain.MaxBodyBytes {
		t.Fatalf("the attributes are not counted: %d", n)
	}
}
