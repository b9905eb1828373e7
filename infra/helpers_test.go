package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// testRoot holds the dummy function assets and every synth's output.
var testRoot string

func TestMain(m *testing.M) {
	// The jsii kernel (node) starts when the CDK packages initialise, before
	// this runs: its environment (JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION)
	// comes from the caller; infra/cdk.mk exports it for make test/infra-test.
	var err error
	testRoot, err = os.MkdirTemp("", "infra-test-")
	if err != nil {
		panic(err)
	}
	for _, fn := range BuiltFunctions {
		dir := filepath.Join(testRoot, "bin", fn)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			panic(err)
		}
		// Distinct content, so each function gets its own asset.
		if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\n# dummy "+fn+"\n"), 0o755); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	jsii.Close()
	os.RemoveAll(testRoot)
	os.Exit(code)
}

// synthesized is one synthesized stack with cdk-nag applied.
type synthesized struct {
	stack    *Stack
	tmpl     assertions.Template
	json     map[string]any // the template
	errors   []string       // unsuppressed error annotations (cdk-nag and CDK)
	warnings []string
}

var (
	synthMu    sync.Mutex
	synthCache = map[string]*synthesized{}
)

// Variants used by the tests: the defaults of cdk.json, a production stage
// with every option changed, and the LocalStack stage as make
// localstack-deploy sets it.
var variants = map[string]map[string]any{
	"dev": {},
	"prod": {
		CtxStage: "prod", CtxAlarmEmail: "ops@example.com", CtxRetrySchedule: "1s,16s,81s",
		CtxRateLimitPerSecond: "7.5", CtxEndpointMaxInFlight: "3", CtxDeliverMaxConcurrency: "20",
		CtxIngestRatePerSecond: "2", CtxIngestBurst: "8",
		CtxAPIThrottleRate: "25", CtxAPIThrottleBurst: "40", CtxSweepGrace: "10m", CtxLogLevel: "warn",
		CtxDLQGrowthThreshold: "50", CtxWAF: "true", CtxWAFRateLimit: "1000",
	},
	// A dev stage with the demo receiver (make deploy CDK_CONTEXT="-c demoReceiver=true").
	"demo": {CtxDemoReceiver: "true"},
	// A dev stage at the lowest bill: behind an HTTP API (-c api=http), its
	// table of provisioned capacity (-c tableCapacity=provisioned), with
	// the demo receiver, which reads the API's URL; its alarms go to an
	// existing topic (-c alarmTopicArn=...).
	"http": {CtxAPIType: APIHTTP, CtxDemoReceiver: "true", CtxTableCapacity: TableProvisioned, CtxTableMinUnits: "2", CtxTableMaxUnits: "500",
		CtxAlarmTopicARN: existingTopic},
	"localstack":       localstackVariant,
	"localstack-stats": with(localstackVariant, CtxLocalStackStats, "true"),
}

// localstackVariant is the localstack stage as infra/cdk.mk deploys it.
var localstackVariant = map[string]any{
	CtxStage: LocalStackStage, CtxLambdaArchitecture: "x86_64", CtxAllowedSchemes: "http,https",
	CtxAllowPrivateEndpoints: "true", CtxRetrySchedule: "1s,1s,1s,1s,1s,1s,1s", CtxSweepGrace: "3s", CtxAPIGatewayCloudWatchRole: "false",
	CtxNotifyEmailFrom: noticeSender,
}

// with is ctx with k set to v.
func with(ctx map[string]any, k string, v any) map[string]any {
	out := maps.Clone(ctx)
	out[k] = v
	return out
}

// existingTopic is an alarm destination the stack does not make (context
// alarmTopicArn).
const existingTopic = "arn:aws:sns:eu-west-1:123456789012:pager"

// cdkJSON is the repository's cdk.json.
func cdkJSON(t testing.TB) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("cdk.json: %v", err)
	}
	return c
}

// synth builds a variant the way `cdk synth` does: cdk.json's context
// (feature flags and defaults) overridden by the variant's -c values, the
// AwsSolutions checks as an aspect. CloudFormation schema validation is off
// here (it costs seconds per synth); `make synth` keeps it.
func synth(t testing.TB, variant string) *synthesized {
	t.Helper()
	synthMu.Lock()
	defer synthMu.Unlock()
	if s, ok := synthCache[variant]; ok {
		return s
	}
	override, ok := variants[variant]
	if !ok {
		t.Fatalf("unknown variant %q", variant)
	}
	ctx := map[string]any{}
	for k, v := range cdkJSON(t)["context"].(map[string]any) {
		ctx[k] = v
	}
	for k, v := range override {
		ctx[k] = v
	}
	outdir := filepath.Join(testRoot, "cdk.out."+variant)
	app := awscdk.NewApp(&awscdk.AppProps{
		Context:                         &ctx,
		Outdir:                          jsii.String(outdir),
		BuiltinCloudFormationValidation: jsii.Bool(false),
	})
	cfg, err := ConfigFromContext(app.Node())
	if err != nil {
		t.Fatalf("variant %s: %v", variant, err)
	}
	stack := NewStack(app, StackName(cfg.Stage), &StackProps{Config: cfg, AssetDir: filepath.Join(testRoot, "bin")})
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true), Reports: jsii.Bool(false)}), nil)
	s := &synthesized{stack: stack, tmpl: assertions.Template_FromStack(stack.Stack, nil)}
	raw, err := json.Marshal(s.tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &s.json); err != nil {
		t.Fatal(err)
	}
	ann := assertions.Annotations_FromStack(stack.Stack)
	all := assertions.Match_StringLikeRegexp(jsii.String(".*"))
	for _, m := range *ann.FindError(jsii.String("*"), all) {
		s.errors = append(s.errors, message(m))
	}
	for _, m := range *ann.FindWarning(jsii.String("*"), all) {
		s.warnings = append(s.warnings, message(m))
	}
	synthCache[variant] = s
	return s
}

// message renders an annotation as "path: text" (through JSON: the Go
// struct's fields are marked deprecated in favour of another package).
func message(m any) string {
	var v struct {
		ID    string `json:"id"`
		Entry struct {
			Data any `json:"data"`
		} `json:"entry"`
	}
	raw, _ := json.Marshal(m)
	if err := json.Unmarshal(raw, &v); err != nil || v.ID == "" {
		return string(raw)
	}
	return fmt.Sprintf("%s: %v", v.ID, v.Entry.Data)
}

// check runs an assertions call, which panics (a JavaScript error) on a
// mismatch, and reports the mismatch as a test error.
func check(t testing.TB, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	f()
}

// resources returns the template's resources of one type by logical id.
func (s *synthesized) resources(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range s.json["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

// only returns the one resource of a type.
func (s *synthesized) only(t testing.TB, typ string) (string, map[string]any) {
	t.Helper()
	rs := s.resources(typ)
	if len(rs) != 1 {
		t.Fatalf("want one %s, have %d", typ, len(rs))
	}
	for id, r := range rs {
		return id, r
	}
	panic("unreachable")
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// functionByName finds a function by its short name (api, deliver...).
func (s *synthesized) functionByName(t testing.TB, fn string) (string, map[string]any) {
	t.Helper()
	return s.byName(t, "AWS::Lambda::Function", "FunctionName", fn)
}

// queueByName finds a queue by its name suffix (deliveries, dlq).
func (s *synthesized) queueByName(t testing.TB, tag string) (string, map[string]any) {
	t.Helper()
	return s.byName(t, "AWS::SQS::Queue", "QueueName", tag)
}

// byName finds the resource of a type whose name property is the stack's
// name followed by -suffix.
func (s *synthesized) byName(t testing.TB, typ, nameProp, suffix string) (string, map[string]any) {
	t.Helper()
	want := StackName(s.stack.Config.Stage) + "-" + suffix
	for id, r := range s.resources(typ) {
		if props(r)[nameProp] == want {
			return id, r
		}
	}
	t.Fatalf("no %s named %s", typ, want)
	return "", nil
}

// render turns a CloudFormation value into a readable string: literals as
// they are, {Ref: X} as ${X}, {Fn::GetAtt: [X, A]} as ${X.A}, Fn::Join
// concatenated. Anything else is JSON.
func render(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	case map[string]any:
		if r, ok := v["Ref"]; ok {
			return "${" + fmt.Sprint(r) + "}"
		}
		if g, ok := v["Fn::GetAtt"].([]any); ok && len(g) == 2 {
			return "${" + fmt.Sprint(g[0]) + "." + fmt.Sprint(g[1]) + "}"
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
			var parts []string
			for _, p := range j[1].([]any) {
				parts = append(parts, render(p))
			}
			return strings.Join(parts, fmt.Sprint(j[0]))
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// list turns a string-or-list value into a list.
func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// statement is one IAM policy statement, flattened.
type statement struct {
	Policy    string // logical id of the AWS::IAM::Policy (or role/inline name)
	Roles     []string
	Effect    string
	Actions   []string
	Resources []string
	Condition map[string]any
}

// statements collects every statement of every AWS::IAM::Policy and every
// inline policy of an AWS::IAM::Role.
func (s *synthesized) statements() []statement {
	var out []statement
	add := func(policy string, roles []string, doc any) {
		d, _ := doc.(map[string]any)
		for _, st := range list(d["Statement"]) {
			st := st.(map[string]any)
			x := statement{Policy: policy, Roles: roles, Effect: fmt.Sprint(st["Effect"])}
			x.Condition, _ = st["Condition"].(map[string]any)
			for _, a := range list(st["Action"]) {
				x.Actions = append(x.Actions, fmt.Sprint(a))
			}
			for _, r := range list(st["Resource"]) {
				x.Resources = append(x.Resources, render(r))
			}
			out = append(out, x)
		}
	}
	for id, r := range s.resources("AWS::IAM::Policy") {
		var roles []string
		for _, role := range list(props(r)["Roles"]) {
			roles = append(roles, strings.Trim(render(role), "${}"))
		}
		add(id, roles, props(r)["PolicyDocument"])
	}
	for id, r := range s.resources("AWS::IAM::Role") {
		for _, p := range list(props(r)["Policies"]) {
			if p == nil {
				continue
			}
			add(id+"/"+fmt.Sprint(p.(map[string]any)["PolicyName"]), []string{id}, p.(map[string]any)["PolicyDocument"])
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
