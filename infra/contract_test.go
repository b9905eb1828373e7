package main

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

// TestTableMatchesLocalDefinition: the deployed table and the one the local
// emulator gets (store.CreateTableInput) come from schema.Table and agree on
// keys, attribute types, indexes, projections, billing and the TTL attribute.
func TestTableMatchesLocalDefinition(t *testing.T) {
	s := synth(t, "dev")
	_, table := s.only(t, "AWS::DynamoDB::Table")
	p := props(table)
	local := store.CreateTableInput("local", true)

	keys := func(v any) [][2]string {
		var out [][2]string
		for _, k := range list(v) {
			k := k.(map[string]any)
			out = append(out, [2]string{k["AttributeName"].(string), k["KeyType"].(string)})
		}
		return out
	}
	localKeys := func(ks []dbtypes.KeySchemaElement) [][2]string {
		var out [][2]string
		for _, k := range ks {
			out = append(out, [2]string{aws.ToString(k.AttributeName), string(k.KeyType)})
		}
		return out
	}
	if got, want := keys(p["KeySchema"]), localKeys(local.KeySchema); !reflect.DeepEqual(got, want) {
		t.Errorf("KeySchema: stack %v, local %v", got, want)
	}

	attrs := map[string]string{}
	for _, a := range list(p["AttributeDefinitions"]) {
		a := a.(map[string]any)
		attrs[a["AttributeName"].(string)] = a["AttributeType"].(string)
	}
	localAttrs := map[string]string{}
	for _, a := range local.AttributeDefinitions {
		localAttrs[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	if !reflect.DeepEqual(attrs, localAttrs) {
		t.Errorf("AttributeDefinitions: stack %v, local %v", attrs, localAttrs)
	}

	type index struct {
		Keys       [][2]string
		Projection string
		NonKey     []string
	}
	stackIx := map[string]index{}
	for _, g := range list(p["GlobalSecondaryIndexes"]) {
		g := g.(map[string]any)
		proj := g["Projection"].(map[string]any)
		ix := index{Keys: keys(g["KeySchema"]), Projection: proj["ProjectionType"].(string)}
		for _, n := range list(proj["NonKeyAttributes"]) {
			if n != nil {
				ix.NonKey = append(ix.NonKey, n.(string))
			}
		}
		sort.Strings(ix.NonKey)
		stackIx[g["IndexName"].(string)] = ix
	}
	localIx := map[string]index{}
	for _, g := range local.GlobalSecondaryIndexes {
		ix := index{Keys: localKeys(g.KeySchema), Projection: string(g.Projection.ProjectionType), NonKey: append([]string(nil), g.Projection.NonKeyAttributes...)}
		sort.Strings(ix.NonKey)
		localIx[aws.ToString(g.IndexName)] = ix
	}
	if !reflect.DeepEqual(stackIx, localIx) {
		t.Errorf("GlobalSecondaryIndexes:\n stack %+v\n local %+v", stackIx, localIx)
	}
	if len(stackIx) != len(schema.Table.Indexes) {
		t.Errorf("%d indexes, schema has %d", len(stackIx), len(schema.Table.Indexes))
	}
	if p["BillingMode"] != string(local.BillingMode) {
		t.Errorf("BillingMode: stack %v, local %v", p["BillingMode"], local.BillingMode)
	}
	// store.CreateTable enables TTL on schema.Table.TTLAttribute.
	ttl := p["TimeToLiveSpecification"].(map[string]any)
	if ttl["AttributeName"] != schema.Table.TTLAttribute || ttl["Enabled"] != true {
		t.Errorf("TTL: stack %v, schema %q", ttl, schema.Table.TTLAttribute)
	}
}

// TestQueuesMatchLocalDefinition: the deployed queues and the local ones
// (queue.DeliveryAttributes / queue.DLQAttributes) agree on visibility
// timeout, retention, the redrive policy's maxReceiveCount and the names'
// suffixes.
func TestQueuesMatchLocalDefinition(t *testing.T) {
	s := synth(t, "dev")
	dlqID, dlq := s.queueByName(t, schema.Queues.DLQTag) // the names: <prefix>-dlq, <prefix>-deliveries, as queue.CreateQueues
	_, q := s.queueByName(t, schema.Queues.DeliveryQueueTag)

	local := queue.DeliveryAttributes("arn:aws:sqs:us-east-1:000000000000:local-dlq")
	num := func(v any) string { return strconv.Itoa(int(v.(float64))) }
	if got, want := num(props(q)["VisibilityTimeout"]), local["VisibilityTimeout"]; got != want {
		t.Errorf("VisibilityTimeout: stack %s, local %s", got, want)
	}
	if got, want := num(props(q)["MessageRetentionPeriod"]), local["MessageRetentionPeriod"]; got != want {
		t.Errorf("MessageRetentionPeriod: stack %s, local %s", got, want)
	}
	var localRedrive struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(local["RedrivePolicy"]), &localRedrive); err != nil {
		t.Fatal(err)
	}
	redrive := props(q)["RedrivePolicy"].(map[string]any)
	if got := int(redrive["maxReceiveCount"].(float64)); got != localRedrive.MaxReceiveCount {
		t.Errorf("maxReceiveCount: stack %d, local %d", got, localRedrive.MaxReceiveCount)
	}
	if got := render(redrive["deadLetterTargetArn"]); got != "${"+dlqID+".Arn}" {
		t.Errorf("deadLetterTargetArn: %s, want the stack's DLQ", got)
	}
	if !strings.HasSuffix(localRedrive.DeadLetterTargetArn, "-"+schema.Queues.DLQTag) {
		t.Errorf("local DLQ ARN %s", localRedrive.DeadLetterTargetArn)
	}
	localDLQ := queue.DLQAttributes()
	if got, want := num(props(dlq)["MessageRetentionPeriod"]), localDLQ["MessageRetentionPeriod"]; got != want {
		t.Errorf("DLQ MessageRetentionPeriod: stack %s, local %s", got, want)
	}
	// Nothing the local queues set is missing from the stack's.
	for k := range local {
		if _, ok := props(q)[k]; !ok {
			t.Errorf("delivery queue: local attribute %s has no counterpart in the stack", k)
		}
	}
	for k := range localDLQ {
		if _, ok := props(dlq)[k]; !ok {
			t.Errorf("DLQ: local attribute %s has no counterpart in the stack", k)
		}
	}
}

// TestEnvironmentParsesWithSharedConfig: each function's environment, as
// the stack sets it, is read by shared/config (the functions' own parser)
// without an error, in every variant.
func TestEnvironmentParsesWithSharedConfig(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack"} {
		s := synth(t, v)
		for _, fn := range Functions {
			_, f := s.functionByName(t, fn)
			vars := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
			env := map[string]string{}
			for k, val := range vars {
				if str, ok := val.(string); ok {
					env[k] = str
				} else if render(val) == "${AWS::AccountId}" { // DEPLOYMENT_ACCOUNT_ID
					env[k] = "123456789012"
				} else if k == "PORTAL_URL" { // the API's URL joined with portal/
					env[k] = "https://abc123.execute-api.eu-west-1.amazonaws.com/dev/portal/"
				} else {
					env[k] = "resolved-at-deploy:" + render(val) // TABLE_NAME, QUEUE_URL, DLQ_URL
				}
			}
			c, err := config.Parse(func(k string) string { return env[k] })
			if err != nil {
				t.Errorf("%s %s: shared/config rejects the environment: %v", v, fn, err)
				continue
			}
			if err := c.Validate(); err != nil {
				t.Errorf("%s %s: %v", v, fn, err)
			}
			if !c.Metrics || c.MetricsNamespace != MetricsNamespace || c.Stage != s.stack.Config.Stage {
				t.Errorf("%s %s: metrics %v namespace %q stage %q", v, fn, c.Metrics, c.MetricsNamespace, c.Stage)
			}
			if c.AllowPrivateEndpoints != (v == "localstack") {
				t.Errorf("%s %s: AllowPrivateEndpoints = %v", v, fn, c.AllowPrivateEndpoints)
			}
			if v != "localstack" && !reflect.DeepEqual(c.AllowedSchemes, []string{"https"}) {
				t.Errorf("%s %s: schemes %v, want https only", v, fn, c.AllowedSchemes)
			}
			if v == "prod" && c.Retry.MaxAttempts() != 4 {
				t.Errorf("prod %s: retry schedule %v", fn, c.Retry)
			}
		}
	}
}
