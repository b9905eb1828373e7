package main

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/gifq/webhooks/shared/schema"
)

// wildcardResourceActions are the only actions allowed on Resource "*",
// each with the reason AWS gives no narrower resource.
var wildcardResourceActions = map[string]string{
	"xray:PutTraceSegments":    "X-Ray has no resource-level permissions for sending trace segments",
	"xray:PutTelemetryRecords": "X-Ray has no resource-level permissions for telemetry records",
	"dynamodb:ListStreams":     "DynamoDB Streams' ListStreams has no resource-level permissions (the stats function's stream mapping; TestIAMLeastPrivilege: only stats)",
}

// customerRoles is the one wildcard resource of another account: the
// customers' roles that api and deliver assume for AWS destinations, only
// with an ExternalId of ours (TestIAMCustomerRoles).
const customerRoles = "arn:${AWS::Partition}:iam::*:role/*"

// ownAccountRolesARN is what api and deliver are denied: every role of the
// deployment's own account.
const ownAccountRolesARN = "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/*"

// TestIAMNoWildcardResources walks every statement of every IAM policy
// (managed-by-CDK policies and inline role policies) and fails on a "*"
// resource outside the allow-list, a wildcard action, or a wildcard in any
// other resource (the indexes are named one by one: infra/iam.go).
func TestIAMNoWildcardResources(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack", "demo"} {
		s := synth(t, v)
		sts := s.statements()
		if len(sts) == 0 {
			t.Fatalf("%s: no IAM statements found", v)
		}
		for _, st := range sts {
			if st.Effect != "Allow" {
				continue
			}
			for _, a := range st.Actions {
				if strings.Contains(a, "*") {
					t.Errorf("%s %s: wildcard action %s", v, st.Policy, a)
				}
			}
			for _, r := range st.Resources {
				switch {
				case r == "*":
					for _, a := range st.Actions {
						if _, ok := wildcardResourceActions[a]; !ok {
							t.Errorf("%s %s: %s on Resource \"*\" (not in the allow-list)", v, st.Policy, a)
						}
					}
				case r == customerRoles && len(st.Actions) == 1 && st.Actions[0] == "sts:AssumeRole":
				case strings.Contains(r, "*"):
					t.Errorf("%s %s: wildcard resource %s for %v", v, st.Policy, r, st.Actions)
				}
			}
		}
		// Managed policies only on API Gateway's account-level logging role.
		for id, r := range s.resources("AWS::IAM::Role") {
			arns := list(props(r)["ManagedPolicyArns"])
			if props(r)["ManagedPolicyArns"] == nil {
				continue
			}
			if !strings.HasPrefix(id, "ApiCloudWatchRole") || len(arns) != 1 ||
				!strings.HasSuffix(render(arns[0]), ":iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs") {
				t.Errorf("%s: role %s has managed policies %v", v, id, arns)
			}
		}
	}
}

// grant is one (resource kind, action) pair.
type grant struct{ Resource, Action string }

// TestIAMLeastPrivilege: each function's role holds exactly what it needs,
// on the stack's own resources.
func TestIAMLeastPrivilege(t *testing.T) {
	s := synth(t, "dev")
	tableID, _ := s.only(t, "AWS::DynamoDB::Table")
	queueID, _ := s.queueByName(t, schema.Queues.DeliveryQueueTag)
	slowID, _ := s.queueByName(t, schema.Queues.SlowQueueTag)
	pacedID, _ := s.queueByName(t, schema.Queues.PacedQueueTag)
	dlqID, _ := s.queueByName(t, schema.Queues.DLQTag)
	scheduleDLQ := scheduleDLQID(t, s)
	signingKeyID, _ := s.signingKey(t)
	busID, _ := s.only(t, "AWS::Events::EventBus")
	kind := func(fnLogs, r string) string {
		switch {
		case r == "*":
			return "*"
		case r == "${"+tableID+".Arn}":
			return "table"
		case r == "${"+tableID+".StreamArn}":
			return "table-stream"
		case strings.HasPrefix(r, "${"+tableID+".Arn}/index/"):
			return "index/" + strings.TrimPrefix(r, "${"+tableID+".Arn}/index/")
		case r == "${"+queueID+".Arn}":
			return "queue"
		case r == "${"+slowID+".Arn}":
			return "slow-lane"
		case r == "${"+pacedID+".Arn}":
			return "paced-lane"
		case r == "${"+dlqID+".Arn}":
			return "dlq"
		case r == "${"+scheduleDLQ+".Arn}":
			return "schedule-dlq"
		case r == "${"+fnLogs+".Arn}":
			return "own-logs"
		case r == "${"+signingKeyID+".Arn}":
			return "signing-key"
		case r == "${"+busID+".Arn}":
			return "ops-bus"
		case r == customerRoles:
			return "customer-roles"
		}
		return "OTHER:" + r
	}
	send := []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
	consume := []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
	wantSQS := map[string]map[string][]string{
		FnAPI: {"queue": send, "slow-lane": send, "paced-lane": send},
		FnDeliver: {"queue": append(append([]string{}, send...), consume...), "slow-lane": append(append([]string{}, send...), consume...),
			"paced-lane": append(append([]string{}, send...), consume...), "dlq": send},
		FnSweeper: {"queue": send, "dlq": send, "schedule-dlq": {"sqs:SendMessage"}}, // its async DLQ (schedules.go)
		FnRedrive: {"queue": send, "dlq": consume},
	}
	for _, fn := range Functions {
		_, f := s.functionByName(t, fn)
		role := strings.TrimSuffix(strings.Trim(render(props(f)["Role"]), "${}"), ".Arn")
		logs := strings.Trim(render(props(f)["LoggingConfig"].(map[string]any)["LogGroup"]), "${}")
		got := map[grant]bool{}
		for _, st := range s.statements() {
			if !contains(st.Roles, role) {
				continue
			}
			if st.Effect != "Allow" {
				continue
			}
			for _, r := range st.Resources {
				for _, a := range st.Actions {
					got[grant{kind(logs, r), a}] = true
				}
			}
		}
		want := map[grant]bool{
			{"own-logs", "logs:CreateLogStream"}: true, {"own-logs", "logs:PutLogEvents"}: true,
			{"*", "xray:PutTraceSegments"}: true, {"*", "xray:PutTelemetryRecords"}: true,
		}
		for _, a := range signingKeyGrants[fn] { // keys.go
			want[grant{"signing-key", a}] = true
		}
		if contains(opsEventPublishers, fn) { // opevents.go: PutEvents on the stack's own bus, nothing else of EventBridge
			want[grant{"ops-bus", "events:PutEvents"}] = true
		}
		if slices.Contains(customerRoleFunctions, fn) { // destinations.go
			want[grant{"customer-roles", "sts:AssumeRole"}] = true
		}
		for q, actions := range wantSQS[fn] {
			for _, a := range actions {
				want[grant{q, a}] = true
			}
		}
		// The table's actions and indexes, exactly (iam.go; the code's own
		// calls are checked against the same table in iam_reach_test.go).
		for _, a := range tableGrants[fn].Actions {
			want[grant{"table", "dynamodb:" + a}] = true
		}
		if fn == FnStats { // its stream mapping reads the table's stream (stack.go), and nothing else of it
			for _, a := range []string{"DescribeStream", "GetRecords", "GetShardIterator"} {
				want[grant{"table-stream", "dynamodb:" + a}] = true
			}
			want[grant{"*", "dynamodb:ListStreams"}] = true
		}
		for _, ix := range tableGrants[fn].Indexes {
			want[grant{"index/" + ix, "dynamodb:Query"}] = true
		}
		for g := range got {
			if !want[g] {
				t.Errorf("%s: unexpected grant %s on %s", fn, g.Action, g.Resource)
			}
		}
		for g := range want {
			if !got[g] {
				t.Errorf("%s: missing grant %s on %s", fn, g.Action, g.Resource)
			}
		}
	}
	// No role is shared, no role is assumable by anything but Lambda (apart
	// from API Gateway's logging role).
	for id, r := range s.resources("AWS::IAM::Role") {
		doc := props(r)["AssumeRolePolicyDocument"].(map[string]any)
		for _, st := range list(doc["Statement"]) {
			svc := render(st.(map[string]any)["Principal"].(map[string]any)["Service"])
			if svc != "lambda.amazonaws.com" && !(strings.HasPrefix(id, "ApiCloudWatchRole") && svc == "apigateway.amazonaws.com") {
				t.Errorf("role %s trusts %s", id, svc)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestNagClean: with the AwsSolutions checks applied (as in the app), no
// unsuppressed error or warning is left, in any variant.
func TestNagClean(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack", "demo", "http"} {
		s := synth(t, v)
		sort.Strings(s.errors)
		sort.Strings(s.warnings)
		for _, e := range s.errors {
			t.Errorf("%s: error: %s", v, e)
		}
		for _, w := range s.warnings {
			t.Errorf("%s: warning: %s", v, w)
		}
	}
}

// TestNagRuns proves the check above is not vacuous: the same aspect on a
// deliberately bad stack in the same kind of app reports errors.
func TestNagRuns(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), BuiltinCloudFormationValidation: jsii.Bool(false)})
	bad := awscdk.NewStack(app, jsii.String("Bad"), nil)
	awssqs.NewQueue(bad, jsii.String("Plain"), &awssqs.QueueProps{Encryption: awssqs.QueueEncryption_UNENCRYPTED})
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Reports: jsii.Bool(false)}), nil)
	errs := assertions.Annotations_FromStack(bad).FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-SQS.*")))
	if len(*errs) == 0 {
		t.Fatal("cdk-nag reported nothing on an unencrypted queue without a DLQ or TLS policy")
	}
	if msg := message((*errs)[0]); !strings.HasPrefix(msg, "/Bad/Plain/Resource: AwsSolutions-SQS") {
		t.Errorf("annotation rendered as %q", msg)
	}
}

// TestNagSuppressionsHaveReasons: every suppression says why.
func TestNagSuppressionsHaveReasons(t *testing.T) {
	all := append(append(append([]NagSuppression{}, apiSuppressions...), apiCloudWatchRoleSuppressions...), functionRoleSuppressions...)
	for _, n := range all {
		if !strings.HasPrefix(n.Rule, "AwsSolutions-") || len(n.Reason) < 60 {
			t.Errorf("suppression %s: reason %q is too thin", n.Rule, n.Reason)
		}
		for _, re := range n.AppliesTo {
			if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") {
				t.Errorf("suppression %s: appliesTo %q is not anchored", n.Rule, re)
			}
		}
	}
}

// TestIAMCustomerRoles: only api and deliver may assume customers' roles,
// only passing an ExternalId of our form, never a role of the deployment's
// own account, in every variant.
func TestIAMCustomerRoles(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack"} {
		s := synth(t, v)
		roleOf := map[string]string{}
		for _, fn := range Functions {
			_, f := s.functionByName(t, fn)
			roleOf[strings.TrimSuffix(strings.Trim(render(props(f)["Role"]), "${}"), ".Arn")] = fn
		}
		found, denied := map[string]bool{}, map[string]bool{}
		for _, st := range s.statements() {
			if !slices.Contains(st.Actions, "sts:AssumeRole") {
				continue
			}
			if st.Effect == "Deny" {
				// Every role of the deployment's own account, unconditionally.
				if len(st.Actions) == 1 && len(st.Resources) == 1 && st.Resources[0] == ownAccountRolesARN && len(st.Condition) == 0 {
					for _, r := range st.Roles {
						denied[roleOf[r]] = true
					}
				}
				continue
			}
			if len(st.Actions) != 1 || len(st.Resources) != 1 || st.Resources[0] != customerRoles {
				t.Errorf("%s: sts:AssumeRole with %v on %v", v, st.Actions, st.Resources)
			}
			like, _ := st.Condition["StringLike"].(map[string]any)
			if len(st.Condition) != 1 || render(like["sts:ExternalId"]) != ExternalIDPattern {
				t.Errorf("%s: sts:AssumeRole without the ExternalId condition: %v", v, st.Condition)
			}
			for _, r := range st.Roles {
				found[roleOf[r]] = true
			}
		}
		for _, fn := range Functions {
			if found[fn] != slices.Contains(customerRoleFunctions, fn) {
				t.Errorf("%s: %s may assume customers' roles: %v", v, fn, found[fn])
			}
			if found[fn] && !denied[fn] {
				t.Errorf("%s: %s may assume roles of the deployment's own account (no Deny on %s)", v, fn, ownAccountRolesARN)
			}
			// The code refuses such a role at registration: it knows the account.
			_, f := s.functionByName(t, fn)
			vars, _ := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
			if got, want := render(vars["DEPLOYMENT_ACCOUNT_ID"]), "${AWS::AccountId}"; found[fn] && got != want {
				t.Errorf("%s: %s DEPLOYMENT_ACCOUNT_ID = %s, want %s", v, fn, got, want)
			}
		}
		// The output that customers' trust policies may name: exactly those roles.
		out, _ := s.json["Outputs"].(map[string]any)["DestinationPrincipalArns"].(map[string]any)
		var want []string
		for _, fn := range customerRoleFunctions {
			for r, f := range roleOf {
				if f == fn {
					want = append(want, "${"+r+".Arn}")
				}
			}
		}
		if got := render(out["Value"]); got != strings.Join(want, ",") {
			t.Errorf("%s: DestinationPrincipalArns = %s, want %s", v, got, strings.Join(want, ","))
		}
	}
}
