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

var (
	accountRE   = regexp.MustCompile(`^[0-9]{12}$`)
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

// ParseTarget checks a destination of the built-in services (SQS, SNS,
// EventBridge) against the rules (Services.Parse).
func ParseTarget(d domain.Destination, regions []string) (Target, error) {
	return Builtin.Parse(d, regions)
}

// Parse checks an AWS destination against the rules (no I/O): a type one
// of ss serves, well-formed ARNs of its service, a role in the same
// partition, and a target in a region this deployment delivers to
// (regions; empty: none). The messages say what is wrong in the
// customer's terms; the first fault found is returned.
func (ss Services) Parse(d domain.Destination, regions []string) (Target, error) {
	var t Target
	svc, ok := ss.of(d.Type)
	if !ok {
		return t, &destination.ConfigError{Field: "type", Message: fmt.Sprintf("%q is not an AWS destination type (%s)", d.Type, strings.Join(ss.types(), ", "))}
	}
	service := svc.ARNService
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
	t.ARN = target
	if err := svc.Resource(&t); err != nil {
		return t, &destination.ConfigError{Field: "target_arn", Message: err.Error()}
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
