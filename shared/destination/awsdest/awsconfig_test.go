package awsdest

import (
	"errors"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

const role = "arn:aws:iam::123456789012:role/gifq-delivery"

func TestParseTarget(t *testing.T) {
	regions := []string{"eu-west-1", "cn-north-1"}
	tests := []struct {
		name  string
		d     domain.Destination
		field string // "" when valid
		msg   string
	}{
		{"sqs", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:orders", RoleARN: role}, "", ""},
		{"sqs fifo", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo", RoleARN: role}, "", ""},
		{"sns", domain.Destination{Type: domain.DestinationSNS, TargetARN: "arn:aws:sns:eu-west-1:123456789012:payouts", RoleARN: role}, "", ""},
		{"eventbridge", domain.Destination{Type: domain.DestinationEventBridge, TargetARN: "arn:aws:events:eu-west-1:123456789012:event-bus/default", RoleARN: "arn:aws:iam::123456789012:role/path/to/r"}, "", ""},
		{"china", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws-cn:sqs:cn-north-1:123456789012:q", RoleARN: "arn:aws-cn:iam::123456789012:role/r"}, "", ""},
		{"http is no aws type", domain.Destination{Type: domain.DestinationHTTP}, "type", "not an AWS destination type"},
		{"no target", domain.Destination{Type: domain.DestinationSQS, RoleARN: role}, "target_arn", "required"},
		{"malformed", domain.Destination{Type: domain.DestinationSQS, TargetARN: "sqs:eu-west-1:q", RoleARN: role}, "target_arn", "is not an ARN"},
		{"service mismatch", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sns:eu-west-1:123456789012:t", RoleARN: role}, "target_arn", "arn:aws:sqs:... ARN, not sns"},
		{"eventbridge needs a bus", domain.Destination{Type: domain.DestinationEventBridge, TargetARN: "arn:aws:events:eu-west-1:123456789012:rule/x", RoleARN: role}, "target_arn", "event-bus/<name>"},
		{"region not served", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:us-east-1:123456789012:q", RoleARN: role}, "target_arn", "region us-east-1 is not one this deployment delivers to (eu-west-1, cn-north-1)"},
		{"partition of the region", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:cn-north-1:123456789012:q", RoleARN: role}, "target_arn", "partition aws-cn, not aws"},
		{"short account", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:1234:q", RoleARN: role}, "target_arn", "12 digits"},
		{"bad queue name", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:a b", RoleARN: role}, "target_arn", "queue name"},
		{"no role", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:q"}, "role_arn", "required"},
		{"role is a user", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:q", RoleARN: "arn:aws:iam::123456789012:user/bob"}, "role_arn", "not an IAM role ARN"},
		{"role in another partition", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:q", RoleARN: "arn:aws-cn:iam::123456789012:role/r"}, "role_arn", "partition aws-cn, the target in aws"},
		{"role with a region", domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:q", RoleARN: "arn:aws:iam:eu-west-1:123456789012:role/r"}, "role_arn", "no region"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTarget(tt.d, regions)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ce *destination.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || !strings.Contains(ce.Message, tt.msg) {
				t.Fatalf("got %v, want %s: ...%s...", err, tt.field, tt.msg)
			}
		})
	}
}

func TestParseTargetMakesTheQueueURL(t *testing.T) {
	tg, err := ParseTarget(domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws-cn:sqs:cn-north-1:123456789012:jobs.fifo", RoleARN: "arn:aws-cn:iam::123456789012:role/r"}, []string{"cn-north-1"})
	if err != nil {
		t.Fatal(err)
	}
	if tg.QueueURL != "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/jobs.fifo" || !tg.FIFO {
		t.Fatalf("%+v", tg)
	}
}

func TestNoRegionsServesNone(t *testing.T) {
	_, err := ParseTarget(domain.Destination{Type: domain.DestinationSQS, TargetARN: "arn:aws:sqs:eu-west-1:123456789012:q", RoleARN: role}, nil)
	if err == nil || !strings.Contains(err.Error(), "none are configured") {
		t.Fatal(err)
	}
}

func TestPartitionOf(t *testing.T) {
	for region, want := range map[string]string{"eu-west-1": "aws", "cn-northwest-1": "aws-cn", "us-gov-west-1": "aws-us-gov", "us-east-1": "aws"} {
		if got := PartitionOf(region); got != want {
			t.Errorf("%s: %s, want %s", region, got, want)
		}
	}
}
