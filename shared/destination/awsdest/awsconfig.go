package awsdest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/arn"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// PartitionOf is the AWS partition a region belongs to.
func PartitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	case strings.HasPrefix(region, "us-iso-"):
		return "aws-iso"
	case strings.HasPrefix(region, "us-isob-"):
		return "aws-iso-b"
	}
	return "aws"
}

// dnsSuffix is the partition's domain, for a queue's URL.
func dnsSuffix(partition string) string {
	if partition == "aws-cn" {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// serviceOf is the ARN service each AWS destination type writes to.
var serviceOf = map[domain.DestinationType]string{
	domain.DestinationSQS:         "sqs",
	domain.DestinationSNS:         "sns",
	domain.DestinationEventBridge: "events",
}

var (
	accountRE   = regexp.MustCompile(`^[0-9]{12}$`)
	queueRE     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}(\.fifo)?$|^[A-Za-z0-9_-]{1,80}$`)
	topicRE     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,251}(\.fifo)?$|^[A-Za-z0-9_-]{1,256}$`)
	busRE       = regexp.MustCompile(`^event-bus/[A-Za-z0-9._/-]{1,256}$`)
	roleRE      = regexp.MustCompile(`^role(/[\x21-\x7E]{1,510})?/[A-Za-z0-9+=,.@_-]{1,64}$`)
	maxARNBytes = 2048
)

// Target is a validated destination's parts.
type Target struct {
	ARN       arn.ARN
	Role      arn.ARN
	FIFO      bool
	QueueURL  string // SQS: the queue's URL, made from its ARN
	Partition string
}

// ParseTarget checks an AWS destination against the rules (no I/O):
// well-formed ARNs of the right service for the type, a role in the same
// partition, and a target in a region this deployment delivers to
// (regions; empty: none). The messages say what is wrong in the
// customer's terms; the first fault found is returned.
func ParseTarget(d domain.Destination, regions []string) (Target, error) {
	var t Target
	service, ok := serviceOf[d.Type]
	if !ok {
		return t, &destination.ConfigError{Field: "type", Message: fmt.Sprintf("%q is not an AWS destination type (aws_sqs, aws_sns, aws_eventbridge)", d.Type)}
	}
	target, err := parseARN("target_arn", d.TargetARN)
	if err != nil {
		return t, err
	}
	if target.Service != service {
		return t, &destination.ConfigError{Field: "target_arn", Message: fmt.Sprintf("an %s destination's target is an arn:%s:%s:... ARN, not %s", d.Type, target.Partition, service, target.Service)}
	}
	if !accountRE.MatchString(target.AccountID) {
		return t, &destination.ConfigError{Field: "target_arn", Message: "the account in the ARN is not 12 digits"}
	}
	if target.Region == "" {
		return t, &destination.ConfigError{Field: "target_arn", Message: "the ARN has no region"}
	}
	if !slices.Contains(regions, target.Region) {
		return t, &destination.ConfigError{Field: "target_arn", Message: fmt.Sprintf("region %s is not one this deployment delivers to (%s)", target.Region, listOrNone(regions))}
	}
	if want := PartitionOf(target.Region); target.Partition != want {
		return t, &destination.ConfigError{Field: "target_arn", Message: fmt.Sprintf("region %s is in partition %s, not %s", target.Region, want, target.Partition)}
	}
	switch d.Type {
	case domain.DestinationSQS:
		if !queueRE.MatchString(target.Resource) {
			return t, &destination.ConfigError{Field: "target_arn", Message: "not a queue name (1 to 80 letters, digits, - and _, or a name ending .fifo)"}
		}
		t.FIFO = strings.HasSuffix(target.Resource, ".fifo")
		t.QueueURL = fmt.Sprintf("https://sqs.%s.%s/%s/%s", target.Region, dnsSuffix(target.Partition), target.AccountID, target.Resource)
	case domain.DestinationSNS:
		if !topicRE.MatchString(target.Resource) {
			return t, &destination.ConfigError{Field: "target_arn", Message: "not a topic name (1 to 256 letters, digits, - and _, or a name ending .fifo)"}
		}
		t.FIFO = strings.HasSuffix(target.Resource, ".fifo")
	case domain.DestinationEventBridge:
		if !busRE.MatchString(target.Resource) {
			return t, &destination.ConfigError{Field: "target_arn", Message: "not an event bus (the resource is event-bus/<name>)"}
		}
	}
	role, err := parseARN("role_arn", d.RoleARN)
	if err != nil {
		return t, err
	}
	if role.Service != "iam" || !roleRE.MatchString(role.Resource) {
		return t, &destination.ConfigError{Field: "role_arn", Message: "not an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)"}
	}
	if role.Region != "" || !accountRE.MatchString(role.AccountID) {
		return t, &destination.ConfigError{Field: "role_arn", Message: "an IAM role ARN has no region and a 12-digit account"}
	}
	if role.Partition != target.Partition {
		return t, &destination.ConfigError{Field: "role_arn", Message: fmt.Sprintf("the role is in partition %s, the target in %s", role.Partition, target.Partition)}
	}
	t.ARN, t.Role, t.Partition = target, role, target.Partition
	return t, nil
}

func parseARN(field, s string) (arn.ARN, error) {
	if s == "" {
		return arn.ARN{}, &destination.ConfigError{Field: field, Message: "required"}
	}
	if len(s) > maxARNBytes || strings.TrimSpace(s) != s {
		return arn.ARN{}, &destination.ConfigError{Field: field, Message: "not an ARN"}
	}
	a, err := arn.Parse(s)
	if err != nil || a.Partition == "" || a.Service == "" || a.Resource == "" {
		return arn.ARN{}, &destination.ConfigError{Field: field, Message: fmt.Sprintf("%q is not an ARN (arn:partition:service:region:account:resource)", s)}
	}
	return a, nil
}

func listOrNone(regions []string) string {
	if len(regions) == 0 {
		return "none are configured"
	}
	return strings.Join(regions, ", ")
}
