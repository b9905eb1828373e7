package main

import (
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// LintSkip is one accepted finding of checkov (a CKV_* check) or cfn-lint (a
// W*/I* rule) on the synthesized template, and why. `make cfn-check` runs
// both on the templates and fails on anything not fixed or listed here.
// Each skip is written into the metadata of the resources it names (never
// template-wide), so a new resource with the same problem is still reported:
//
//	checkov:  Metadata.checkov.skip: [{id, comment: Reason}]
//	cfn-lint: Metadata.cfn-lint.config.ignore_checks: [id] (cfn-lint has no
//	          place for a reason; the reason lives here)
type LintSkip struct {
	ID     string
	Reason string
	// On selects the resources the skip applies to.
	On func(s *Stack) []awscdk.CfnResource
}

// LintSkips are every accepted finding. TestLintSkips checks that each has a
// reason and applies to at least one resource of some variant.
var LintSkips = []LintSkip{
	// Stack-wide decisions, per resource type.
	{ID: "CKV_AWS_158", On: ofType("AWS::Logs::LogGroup"),
		Reason: "CloudWatch Logs encrypts every log group at rest already; API keys and endpoint secrets are never " +
			"logged (the e2e suite's TestSecretsNeverLogged), and anyone who can read the logs in the account could " +
			"use a customer-managed key too: it would add cost and a key policy without protecting more."},
	{ID: "CKV_AWS_173", On: ofType("AWS::Lambda::Function"),
		Reason: "Lambda encrypts environment variables at rest with an AWS-managed key; they hold only resource " +
			"names, URLs and tuning values. Secrets are never put in the environment."},
	{ID: "CKV_AWS_115", On: functions(Functions...),
		Reason: "No reserved concurrency on purpose: new accounts can have a concurrency quota of 10, where " +
			"reserving would fail the deploy; deliver is bounded by its event source's maximum concurrency " +
			"(deliverMaxConcurrency) and the API by its stage throttle."},
	{ID: "CKV_AWS_117", On: functionsOutsideVPC,
		Reason: "The functions talk only to AWS APIs and to customers' public HTTPS endpoints; a VPC would add NAT " +
			"gateways and their cost to every deployment. Static egress IPs (context egressStaticIps=true) put " +
			"deliver in a VPC behind NAT gateways (docs/deploy.md)."},
	{ID: "CKV_AWS_27", On: ofType("AWS::SQS::Queue"),
		Reason: "False positive: the queues are encrypted with SQS-managed SSE (SqsManagedSseEnabled: true), which " +
			"this check does not recognise; it accepts only a KMS key."},
	{ID: "CKV_AWS_119", On: ofType("AWS::DynamoDB::Table"),
		Reason: "The table is encrypted at rest with the AWS-managed key. A customer-managed key would add KMS cost " +
			"to every read and write yet protect nothing from the functions, which must read the table: API keys are " +
			"stored only as SHA-256 hashes, and endpoint signing secrets need encryption in the application " +
			"(the deployment audit), which a table key does not give."},

	// The REST API.
	{ID: "CKV_AWS_59", On: ofType("AWS::ApiGateway::Method"),
		Reason: "Lambda proxy methods: the api function authenticates every route but GET /healthz, the OpenAPI " +
			"document and the portal's static page with bearer API keys (stored as SHA-256 hashes) or portal " +
			"session tokens; an API Gateway authorizer would add a second lookup per request."},
	{ID: "CKV_AWS_120", On: ofType("AWS::ApiGateway::Stage"),
		Reason: "No API cache: responses are per API key and mostly writes (ingest); a cache would serve one " +
			"account's answers to another's identical request and costs per hour."},

	// Per function: Lambda's own DLQ (DeadLetterConfig) only catches failed
	// asynchronous invocations.
	{ID: "CKV_AWS_116", On: functions(FnAPI),
		Reason: "Invoked synchronously by API Gateway: the caller gets the error; a function DLQ never receives anything."},
	{ID: "CKV_AWS_116", On: functions(FnDeliver),
		Reason: "Invoked by an SQS event source mapping (synchronously): failed messages go to the delivery queue's " +
			"own dead-letter queue (redrive policy) and the app dead-letters exhausted deliveries itself."},
	{ID: "CKV_AWS_116", On: functions(FnRedrive),
		Reason: "Run by hand from the console or CLI (synchronous invoke): the operator sees the result."},
	{ID: "CKV_AWS_116", On: functions(FnSweeper),
		Reason: "Invoked by EventBridge schedules: every run queries the sweep and park indexes afresh, so the next " +
			"run redoes what a failed one missed; a dead-lettered schedule event would carry nothing to replay. " +
			"Failed runs show in the function's Errors metric."},

	{ID: "CKV_AWS_116", On: functions(FnStats),
		Reason: "Invoked by a DynamoDB stream mapping (synchronously): a failed batch is retried, halved, twice and then " +
			"skipped (bounded, so a poison record cannot stall the shard); the counters are approximate by design and " +
			"a skipped batch shows in the StatsErrors alarm; a function DLQ never receives anything."},
	{ID: "CKV_AWS_116", On: functions(FnOps),
		Reason: "Run by hand from the console or CLI (synchronous invoke): the operator sees the result, the key in it."},
	{ID: "CKV_AWS_116", On: functions(FnReceiver),
		Reason: "The demo receiver is invoked synchronously through its function URL: the webhook sender gets the error and retries."},
	{ID: "CKV_AWS_258", On: ofType("AWS::Lambda::Url"),
		Reason: "The demo receiver's URL (context demoReceiver, refused on prod) is a webhook endpoint: senders sign " +
			"the payload (Standard Webhooks), which the function verifies, and cannot sign AWS requests (AWS_IAM)."},

	// The WAF option (api_protection.go).
	{ID: "CKV_AWS_192", On: ofType("AWS::WAFv2::WebACL"),
		Reason: "No Log4j (JNDI lookup) managed rule: the functions are Go and run no Java, so there is nothing for " +
			"such a lookup to reach, and the rule group (AWSManagedRulesKnownBadInputsRuleSet) inspects bodies, " +
			"headers and paths: it would refuse customers' webhook payloads that merely carry such a string, where " +
			"an event body is opaque data stored and delivered byte for byte. The web ACL's job is the per-IP rate."},

	// Static egress IPs (egress.go).
	{ID: "CKV_AWS_111", On: deliverPolicyInVPC,
		Reason: "Lambda creates and deletes the deliver function's network interfaces in its VPC with the function's " +
			"role: the EC2 actions of AWS's AWSLambdaVPCAccessExecutionRole, on \"*\" as there (DescribeNetworkInterfaces " +
			"works only on \"*\"). Every other write in the policy names its table or queue."},

	// cfn-lint.
	{ID: "W3005", On: ofType("AWS::Lambda::Function"),
		Reason: "CDK's Function itself adds DependsOn on its role construct (the role and its default policy), so " +
			"the function is created only once its permissions exist; the role part repeats the GetAtt and is harmless."},
}

// ofType selects every resource of a CloudFormation type in the stack.
func ofType(typ string) func(s *Stack) []awscdk.CfnResource {
	return func(s *Stack) []awscdk.CfnResource {
		var out []awscdk.CfnResource
		for _, r := range cfnResources(s) {
			if *r.CfnResourceType() == typ {
				out = append(out, r)
			}
		}
		return out
	}
}

// functions selects the stack's named functions (api, deliver, ...).
func functions(names ...string) func(s *Stack) []awscdk.CfnResource {
	return func(s *Stack) []awscdk.CfnResource {
		var out []awscdk.CfnResource
		for _, fn := range names {
			if f, ok := s.Functions[fn]; ok {
				out = append(out, f.Node().DefaultChild().(awscdk.CfnResource))
			}
		}
		return out
	}
}

// functionsOutsideVPC selects every function that has no VpcConfig.
func functionsOutsideVPC(s *Stack) []awscdk.CfnResource {
	var out []awscdk.CfnResource
	for _, r := range ofType("AWS::Lambda::Function")(s) {
		if f, ok := r.(awslambda.CfnFunction); ok && f.VpcConfig() != nil {
			continue
		}
		out = append(out, r)
	}
	return out
}

// deliverPolicyInVPC selects deliver's role policy when deliver is in the
// egress VPC.
func deliverPolicyInVPC(s *Stack) []awscdk.CfnResource {
	if s.Egress == nil {
		return nil
	}
	p := s.Roles[FnDeliver].Node().TryFindChild(jsii.String("DefaultPolicy"))
	if p == nil {
		return nil
	}
	return []awscdk.CfnResource{p.Node().DefaultChild().(awscdk.CfnResource)}
}

// cfnResources is every CloudFormation resource in the stack.
func cfnResources(s *Stack) []awscdk.CfnResource {
	var out []awscdk.CfnResource
	for _, c := range *s.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		if !*awscdk.CfnResource_IsCfnResource(c) {
			continue
		}
		if r, ok := c.(awscdk.CfnResource); ok {
			out = append(out, r)
		}
	}
	return out
}

// isCheckov reports whether a skip is checkov's (CKV_..., CKV2_...) rather
// than cfn-lint's.
func isCheckov(id string) bool { return len(id) > 4 && id[:3] == "CKV" }

// addLintSkips writes LintSkips into the resources' metadata.
func addLintSkips(s *Stack) {
	type skips struct {
		r       awscdk.CfnResource
		checkov []map[string]string
		cfnLint []string
	}
	byPath := map[string]*skips{}
	for _, k := range LintSkips {
		for _, r := range k.On(s) {
			p := *r.Node().Path()
			if byPath[p] == nil {
				byPath[p] = &skips{r: r}
			}
			if isCheckov(k.ID) {
				byPath[p].checkov = append(byPath[p].checkov, map[string]string{"id": k.ID, "comment": k.Reason})
			} else {
				byPath[p].cfnLint = append(byPath[p].cfnLint, k.ID)
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		k := byPath[p]
		if len(k.checkov) > 0 {
			k.r.AddMetadata(jsii.String("checkov"), map[string]any{"skip": k.checkov})
		}
		if len(k.cfnLint) > 0 {
			k.r.AddMetadata(jsii.String("cfn-lint"), map[string]any{"config": map[string]any{"ignore_checks": k.cfnLint}})
		}
	}
}
