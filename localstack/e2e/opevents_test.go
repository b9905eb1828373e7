package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/opevents"
)

// opEvent is an operational event as a rule's target receives it.
type opEvent struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
}

// An owner's disable and a secret rotation are stated as operational
// events. Deployed (LocalStack): a rule on the stack's own bus
// (E2E_OPS_EVENT_BUS) sends them to an SQS queue the test reads. Locally
// (no EventBridge, as make dev): the same events are the api's JSON log
// lines.
func TestOperationalEventsReachTheBus(t *testing.T) {
	var read func(t *testing.T, want map[string]bool) map[string]opEvent
	var logs *lockedBuffer
	if remote() {
		read = busCapture(t)
	} else {
		logs = &lockedBuffer{}
		read = func(t *testing.T, want map[string]bool) map[string]opEvent { return logCapture(t, logs, want) }
	}
	o := opts{env: map[string]string{"LOG_LEVEL": "info"}} // the events are info lines
	if logs != nil {
		o.logs = logs
	}
	h := start(t, o)
	_, key := h.account(t)
	ep := h.endpoint(t, key, "https://hooks.example.com/ops")
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", nil, nil); code != 200 {
		t.Fatalf("rotate: %d", code)
	}
	if code := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, `{"disabled":true}`, nil); code != 200 {
		t.Fatalf("disable: %d", code)
	}
	got := read(t, map[string]bool{string(opevents.SecretRotated): true, string(opevents.EndpointDisabled): true})
	var rotated opevents.SecretRotatedDetail
	if err := json.Unmarshal(got[string(opevents.SecretRotated)].Detail, &rotated); err != nil || rotated.EndpointID != ep.ID || rotated.PreviousSecretExpiresAt == "" {
		t.Errorf("secret_rotated detail: %s (%v)", got[string(opevents.SecretRotated)].Detail, err)
	}
	if strings.Contains(string(got[string(opevents.SecretRotated)].Detail), "whsec_") {
		t.Error("secret_rotated carries a secret")
	}
	var disabled opevents.EndpointDisabledDetail
	if err := json.Unmarshal(got[string(opevents.EndpointDisabled)].Detail, &disabled); err != nil || disabled.EndpointID != ep.ID || disabled.By != "api" || disabled.Reason == "" {
		t.Errorf("endpoint.disabled detail: %s (%v)", got[string(opevents.EndpointDisabled)].Detail, err)
	}
	for typ, e := range got {
		if e.Source != opevents.Source {
			t.Errorf("%s: source %q", typ, e.Source)
		}
	}
}

// logCapture reads the operational events from the app's log lines.
func logCapture(t *testing.T, logs *lockedBuffer, want map[string]bool) map[string]opEvent {
	t.Helper()
	got := map[string]opEvent{}
	for _, line := range strings.Split(logs.String(), "\n") {
		var e opEvent
		if json.Unmarshal([]byte(line), &e) == nil && want[e.DetailType] && strings.Contains(line, `"msg":"operational event"`) {
			got[e.DetailType] = e
		}
	}
	if len(got) != len(want) {
		t.Fatalf("log has %d of the %d operational events: %s", len(got), len(want), logs.String())
	}
	return got
}

// busCapture puts a rule on the deployed stack's ops bus with an SQS queue
// as its target, and returns a reader of what arrives there; all of it is
// removed when the test ends.
func busCapture(t *testing.T) func(t *testing.T, want map[string]bool) map[string]opEvent {
	t.Helper()
	bus := os.Getenv("E2E_OPS_EVENT_BUS")
	if bus == "" {
		t.Fatal("E2E_OPS_EVENT_BUS is not set (make localstack-e2e sets it from the stack's OpsEventBusName output)")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eb, sq := eventbridge.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	name := fmt.Sprintf("e2e-opevents-%d", time.Now().UnixNano())
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	pattern, _ := json.Marshal(map[string]any{"source": []string{opevents.Source}})
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(bus),
		EventPattern: aws.String(string(pattern))}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(name), EventBusName: aws.String(bus)})
	})
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)])}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(name), EventBusName: aws.String(bus), Ids: []string{"queue"}})
	})
	return func(t *testing.T, want map[string]bool) map[string]opEvent {
		t.Helper()
		got := map[string]opEvent{}
		deadline := time.Now().Add(60 * time.Second)
		for len(got) < len(want) && time.Now().Before(deadline) {
			out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out.Messages {
				var e opEvent
				if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &e); err != nil {
					t.Fatalf("not an event: %s", aws.ToString(m.Body))
				}
				if want[e.DetailType] {
					got[e.DetailType] = e
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("the rule's queue received %d of the %d events: %v", len(got), len(want), got)
		}
		return got
	}
}
