package awskinesis

import (
	"errors"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/awsdest"
	"github.com/gifq/webhooks/shared/domain"
)

const role = "arn:aws:iam::123456789012:role/gifq-delivery"

func TestPartitionKeyIsTheOrderingKeyElseTheEventID(t *testing.T) {
	if k := PartitionKey(destination.Request{EventID: "evt_1"}); k != "evt_1" {
		t.Fatal(k)
	}
	if k := PartitionKey(destination.Request{EventID: "evt_1", OrderingKey: "customer-7"}); k != "customer-7" {
		t.Fatal(k)
	}
	long := strings.Repeat("é", MaxPartitionKey+10)
	if k := PartitionKey(destination.Request{OrderingKey: long}); len([]rune(k)) != MaxPartitionKey {
		t.Fatalf("%d characters", len([]rune(k)))
	}
}

func TestStreamTargets(t *testing.T) {
	ss := awsdest.Services{Stream}
	regions := []string{"eu-west-1"}
	ok := domain.Destination{Type: Type, TargetARN: "arn:aws:kinesis:eu-west-1:123456789012:stream/payouts", RoleARN: role}
	if _, err := ss.Parse(ok, regions); err != nil {
		t.Fatal(err)
	}
	for arn, msg := range map[string]string{
		"arn:aws:kinesis:eu-west-1:123456789012:payouts":        "not a stream",
		"arn:aws:kinesis:eu-west-1:123456789012:stream/a b":     "not a stream",
		"arn:aws:sqs:eu-west-1:123456789012:payouts":            "arn:aws:kinesis:... ARN, not sqs",
		"arn:aws:kinesis:us-east-1:123456789012:stream/payouts": "region us-east-1 is not one",
	} {
		d := ok
		d.TargetARN = arn
		var ce *destination.ConfigError
		if _, err := ss.Parse(d, regions); !errors.As(err, &ce) || ce.Field != "target_arn" || !strings.Contains(ce.Message, msg) {
			t.Errorf("%s: %v, want %q", arn, err, msg)
		}
	}
}

// Kinesis's own throttle is a throttle (retried), not an unknown error.
func TestKinesisErrorsMapOntoTheContract(t *testing.T) {
	for code, class := range map[string]string{
		"ProvisionedThroughputExceededException": awsdest.ErrThrottled,
		"ResourceInUseException":                 awsdest.ErrUnavailable,
		"ResourceNotFoundException":              awsdest.ErrNotFound,
		"AccessDeniedException":                  awsdest.ErrAccessDenied,
		"KMSDisabledException":                   awsdest.ErrKMS,
	} {
		got := Stream.Codes[strings.ToLower(code)]
		if got == "" {
			got = awsdest.ClassOf(awsdest.StagePublish, code, 400)
		}
		if got != class {
			t.Errorf("%s: %s, want %s", code, got, class)
		}
	}
}
