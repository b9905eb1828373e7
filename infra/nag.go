package main

import (
	"regexp"

	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// NagSuppression is one accepted cdk-nag finding and why. Every finding that
// AwsSolutionsChecks reports on this stack and that was not fixed is listed
// here; the tests fail on any other (TestNagClean).
type NagSuppression struct {
	Rule      string
	AppliesTo []string // regular expressions over the finding's detail; empty: the whole rule on the resource
	Reason    string
}

// Suppressions by what they apply to.
var (
	// The REST API (applied to the API and its children: methods, stage).
	apiSuppressions = []NagSuppression{
		{Rule: "AwsSolutions-APIG2", Reason: "Lambda proxy integration: the api function validates every request " +
			"itself (JSON shape, the 256 KiB event limit, URLs) and answers errors as {\"error\":{...}}; an API Gateway " +
			"request validator would duplicate that and could not express the rules."},
		{Rule: "AwsSolutions-APIG4", Reason: "The API authenticates every route but GET /healthz inside the api function " +
			"with bearer API keys that are stored only as SHA-256 hashes in DynamoDB, scoped to one account; an API " +
			"Gateway authorizer would add a second lookup on every request without adding protection."},
		{Rule: "AwsSolutions-COG4", Reason: "Producers are internal services, not Cognito users: they authenticate with " +
			"hashed bearer API keys checked in the api function (see APIG4)."},
		{Rule: "AwsSolutions-APIG3", Reason: "No WAF web ACL by default: the callers are internal producers with API keys, " +
			"the stage is throttled (apiThrottleRate/apiThrottleBurst, 2,000 rps by default) and every request needs a " +
			"valid key. Context waf=true attaches a web ACL with a per-IP rate rule (infra/api_protection.go) for an " +
			"API exposed to untrusted networks (docs/deploy.md)."},
	}
	// The account-level role that lets API Gateway write execution logs.
	apiCloudWatchRoleSuppressions = []NagSuppression{
		{Rule: "AwsSolutions-IAM4", AppliesTo: []string{`^Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs$`},
			Reason: "The API Gateway account role must carry AmazonAPIGatewayPushToCloudWatchLogs: it is the policy " +
				"AWS documents for this role, and it is scoped by AWS to the logs API Gateway writes."},
	}
	// Each function role's policy.
	functionRoleSuppressions = []NagSuppression{
		{Rule: "AwsSolutions-IAM5", AppliesTo: []string{`^Resource::arn:<AWS::Partition>:iam::\*:role/\*$`},
			Reason: "AWS destinations (api and deliver only): sts:AssumeRole into the role each customer names, in their " +
				"own account, so no account or role name is known when the stack is made. The statement requires an " +
				"sts:ExternalId of our form, and each customer's trust policy requires their account's own " +
				"(docs/destinations.md, TestIAMCustomerRoles)."},
		{Rule: "AwsSolutions-IAM5", AppliesTo: []string{`^Resource::\*$`},
			Reason: "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level " +
				"permissions and require Resource \"*\". No other statement has a wildcard resource (TestIAMNoWildcardResources), " +
				"but for deliver's EC2 network-interface actions with egressStaticIps, which Lambda needs for a function " +
				"in a VPC and which take \"*\" as in AWSLambdaVPCAccessExecutionRole (TestEgressStaticIPs)."},
	}
)

// The EventBridge targets' DLQ (schedules.go).
var scheduleDLQSuppressions = []NagSuppression{
	{Rule: "AwsSolutions-SQS3", Reason: "This queue is a dead-letter queue: the DLQ of the sweeper's EventBridge " +
		"targets (DeadLetterConfig). cdk-nag only recognises a DLQ named by another SQS queue's RedrivePolicy; a DLQ " +
		"of its own would hold nothing (nothing consumes this queue), and ScheduleDlqNotEmpty alarms on it."},
}

func (n NagSuppression) pack() *cdknag.NagPackSuppression {
	s := &cdknag.NagPackSuppression{Id: jsii.String(n.Rule), Reason: jsii.String(n.Reason)}
	if len(n.AppliesTo) > 0 {
		var at []interface{}
		for _, re := range n.AppliesTo {
			regexp.MustCompile(re) // fail fast on a typo
			at = append(at, &cdknag.RegexAppliesTo{Regex: jsii.String("/" + re + "/")})
		}
		s.AppliesTo = &at
	}
	return s
}

func packs(ns []NagSuppression) *[]*cdknag.NagPackSuppression {
	var out []*cdknag.NagPackSuppression
	for _, n := range ns {
		out = append(out, n.pack())
	}
	return &out
}

// addNagSuppressions attaches the accepted findings to the resources they
// belong to (never stack-wide, so a new resource with the same problem is
// still reported).
func addNagSuppressions(s *Stack) {
	if s.HTTPApi != nil {
		cdknag.NagSuppressions_AddResourceSuppressions(s.HTTPApi, packs(apiSuppressions), jsii.Bool(true))
	} else {
		cdknag.NagSuppressions_AddResourceSuppressions(s.Api, packs(apiSuppressions), jsii.Bool(true))
		if role := s.Api.Node().TryFindChild(jsii.String("CloudWatchRole")); role != nil {
			cdknag.NagSuppressions_AddResourceSuppressions(role, packs(apiCloudWatchRoleSuppressions), jsii.Bool(true))
		}
	}
	for _, role := range s.Roles {
		cdknag.NagSuppressions_AddResourceSuppressions(role, packs(functionRoleSuppressions), jsii.Bool(true))
	}
	cdknag.NagSuppressions_AddResourceSuppressions(s.ScheduleDLQ, packs(scheduleDLQSuppressions), jsii.Bool(true))
}
