package awsdest

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/sender"
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
	for _, r := range []sender.Request{{Destination: d}, {}} {
		res := p.Send(context.Background(), r)
		if res.ErrorClass != retry.ErrAWSInvalid || retry.Classify(res.Result) != retry.Reject || res.Error == "" {
			t.Fatalf("%+v", res)
		}
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
	res := p.Send(context.Background(), sender.Request{Destination: d})
	if res.ErrorClass != retry.ErrAWSInvalid || retry.Classify(res.Result) != retry.Reject || !strings.Contains(res.Error, "own AWS account") {
		t.Fatalf("%+v", res)
	}
}
