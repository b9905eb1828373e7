package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/schema"
)

// scheduleDLQID is the logical id of the EventBridge targets' DLQ: the one
// queue without a fixed name.
func scheduleDLQID(t testing.TB, s *synthesized) string {
	t.Helper()
	var ids []string
	for id, r := range s.resources("AWS::SQS::Queue") {
		if props(r)["QueueName"] == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 || !strings.HasPrefix(ids[0], "ScheduleTargetDLQ") {
		t.Fatalf("unnamed queues %v, want the schedule target DLQ alone", ids)
	}
	return ids[0]
}

// Both EventBridge targets send what they cannot deliver to the schedule
// DLQ (checkov CKV_AWS_116), which EventBridge may write to and which is
// encrypted, TLS-only, kept 14 days.
func TestSchedulesHaveADLQ(t *testing.T) {
	s := synth(t, "dev")
	dlq := scheduleDLQID(t, s)
	rules := s.resources("AWS::Events::Rule")
	if len(rules) != 2 {
		t.Fatalf("%d rules, want 2", len(rules))
	}
	for id, r := range rules {
		targets := list(props(r)["Targets"])
		if len(targets) != 1 {
			t.Fatalf("rule %s: targets %v", id, targets)
		}
		tg := targets[0].(map[string]any)
		dlc, _ := tg["DeadLetterConfig"].(map[string]any)
		if got := render(dlc["Arn"]); got != "${"+dlq+".Arn}" {
			t.Errorf("rule %s: dead-letter config %v, want the schedule DLQ", id, tg["DeadLetterConfig"])
		}
		if rp, _ := tg["RetryPolicy"].(map[string]any); rp["MaximumRetryAttempts"] == nil {
			t.Errorf("rule %s: no retry policy", id)
		}
	}
	check(t, "schedule DLQ", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), m{
			"MessageRetentionPeriod": ScheduleDLQRetention,
			"SqsManagedSseEnabled":   true,
			"QueueName":              assertions.Match_Absent(),
		})
	})
	check(t, "EventBridge may send to the schedule DLQ, from these rules only", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), m{
			"Queues": []any{m{"Ref": dlq}},
			"PolicyDocument": m{"Statement": assertions.Match_ArrayWith(&[]any{like(m{
				"Effect":    "Allow",
				"Action":    "sqs:SendMessage",
				"Principal": m{"Service": "events.amazonaws.com"},
				"Condition": m{"ArnEquals": m{"aws:SourceArn": assertions.Match_AnyValue()}},
			})})},
		})
	})
	// It is also the sweeper function's own DLQ (EventBridge invokes it
	// asynchronously; checkov CKV_AWS_116), and the function is created only
	// once its role may send there (Lambda checks at creation).
	for _, fn := range Functions {
		_, r := s.functionByName(t, fn)
		dlc, _ := props(r)["DeadLetterConfig"].(map[string]any)
		if fn != FnSweeper {
			if dlc != nil {
				t.Errorf("%s has a DLQ %v", fn, dlc)
			}
			continue
		}
		if got := render(dlc["TargetArn"]); got != "${"+dlq+".Arn}" {
			t.Errorf("sweeper DLQ %v, want the schedule DLQ", dlc)
		}
		waits := false
		for _, d := range list(r["DependsOn"]) {
			waits = waits || strings.Contains(fmt.Sprint(d), "SweeperFunctionRoleDefaultPolicy")
		}
		if !waits {
			t.Errorf("the sweeper does not wait for its role's policy: DependsOn %v", r["DependsOn"])
		}
	}
	// prod keeps it with the other queues.
	prod := synth(t, "prod")
	if r := prod.resources("AWS::SQS::Queue")[scheduleDLQID(t, prod)]; r["DeletionPolicy"] != "Retain" {
		t.Errorf("prod schedule DLQ: DeletionPolicy %v", r["DeletionPolicy"])
	}
}

// Deliver puts its retries back on the queue that invokes
// it, so Lambda must not cut the chain after 16 hops; every other function
// keeps the default, and one alarm watches every function's dropped count.
func TestRecursion(t *testing.T) {
	s := synth(t, "dev")
	for _, fn := range Functions {
		_, r := s.functionByName(t, fn)
		want := "Terminate"
		if fn == FnDeliver {
			want = "Allow"
		}
		if got := props(r)["RecursiveLoop"]; got != want {
			t.Errorf("%s: RecursiveLoop %v, want %s", fn, got, want)
		}
	}
	_, alarm := s.byName(t, "AWS::CloudWatch::Alarm", "AlarmName", AlarmRecursionDropped)
	p := props(alarm)
	if p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" || p["Threshold"] != float64(1) || p["TreatMissingData"] != "notBreaching" {
		t.Errorf("recursion alarm: %v", p)
	}
	watched := map[string]bool{}
	var expr string
	for _, q := range list(p["Metrics"]) {
		q := q.(map[string]any)
		if e, ok := q["Expression"]; ok {
			expr = fmt.Sprint(e)
			continue
		}
		ms := q["MetricStat"].(map[string]any)
		metric := ms["Metric"].(map[string]any)
		if metric["Namespace"] != "AWS/Lambda" || metric["MetricName"] != "RecursiveInvocationsDropped" || ms["Stat"] != "Sum" {
			t.Errorf("recursion alarm metric %v", ms)
		}
		for _, d := range list(metric["Dimensions"]) {
			watched[render(d.(map[string]any)["Value"])] = true
		}
	}
	if expr != "SUM(METRICS())" {
		t.Errorf("recursion alarm expression %q", expr)
	}
	for _, fn := range Functions {
		id, _ := s.functionByName(t, fn)
		if !watched["${"+id+"}"] {
			t.Errorf("the recursion alarm does not watch %s (watches %v)", fn, watched)
		}
	}
}

// The console's DLQ redrive needs the delivery queue's ARN (custom
// destination), and the dashboard shows every alarm.
func TestDeliveryQueueArnOutputAndEveryAlarmOnTheDashboard(t *testing.T) {
	s := synth(t, "dev")
	queueID, _ := s.queueByName(t, schema.Queues.DeliveryQueueTag)
	out, ok := s.json["Outputs"].(map[string]any)["DeliveryQueueArn"].(map[string]any)
	if !ok {
		t.Fatal("no DeliveryQueueArn output")
	}
	if got := render(out["Value"]); got != "${"+queueID+".Arn}" {
		t.Errorf("DeliveryQueueArn = %s, want the delivery queue's ARN", got)
	}
	var names []string
	for _, r := range s.resources("AWS::CloudWatch::Alarm") {
		names = append(names, strings.TrimPrefix(fmt.Sprint(props(r)["AlarmName"]), StackName("dev")+"-"))
	}
	sort.Strings(names)
	order := append([]string(nil), AlarmOrder...)
	sort.Strings(order)
	if strings.Join(names, ",") != strings.Join(order, ",") {
		t.Errorf("alarms %v, dashboard order %v", names, order)
	}
	_, d := s.only(t, "AWS::CloudWatch::Dashboard")
	body := render(props(d)["DashboardBody"])
	for id := range s.resources("AWS::CloudWatch::Alarm") {
		if !strings.Contains(body, "${"+id+".Arn}") {
			t.Errorf("dashboard lacks alarm %s", id)
		}
	}
}

// docs/deploy.md describes every alarm (in its Alarms section) and every
// output of the stack, so an on-call engineer finds what an alarm means.
func TestDeployDocDescribesEveryAlarmAndOutput(t *testing.T) {
	b, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Alarms\n")
	if start < 0 {
		t.Fatal("docs/deploy.md has no Alarms section")
	}
	alarms := doc[start:]
	alarms = alarms[:strings.Index(alarms[1:], "\n## ")+1]
	for _, id := range AlarmOrder {
		if !strings.Contains(alarms, "`"+id+"`") {
			t.Errorf("the Alarms section of docs/deploy.md does not describe %s", id)
		}
	}
	for _, v := range []string{"dev", "prod"} {
		for name := range synth(t, v).json["Outputs"].(map[string]any) {
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/deploy.md does not mention the %s output %s", v, name)
			}
		}
	}
}
