package awsdest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

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
