package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// localStackAWS is LocalStack as a customer's AWS account: a deployed
// stack's (make localstack-e2e points AWS_ENDPOINT_URL at it), or, for a
// local run, LOCALSTACK_ENDPOINT (localstack/host.sh up). STS, SQS, SNS and
// EventBridge are LocalStack's; it does not enforce IAM, so what is
// asserted is what it does: AssumeRole with an ExternalId gives
// credentials, and messages land where they should with their attributes.
func localStackAWS(t *testing.T) aws.Config {
	t.Helper()
	if remote() {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ep := os.Getenv("LOCALSTACK_ENDPOINT")
	if ep == "" {
		t.Skip("needs LocalStack: LOCALSTACK_ENDPOINT (localstack/host.sh up), or a deployed stack (make localstack-e2e)")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"), awsconfig.WithBaseEndpoint(ep),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// customerQueue makes a queue in the customer's account: its URL and ARN.
func customerQueue(t *testing.T, c *sqs.Client, name string) (string, string) {
	t.Helper()
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	a, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(q.QueueUrl), a.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// receiveOne waits for one message on url.
func receiveOne(t *testing.T, c *sqs.Client, url string) sqstypes.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 2,
			MaxNumberOfMessages: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 1 {
			return out.Messages[0]
		}
	}
	t.Fatalf("no message on %s", url)
	return sqstypes.Message{}
}

func attrs(m sqstypes.Message) map[string]string {
	out := map[string]string{}
	for k, v := range m.MessageAttributes {
		out[k] = aws.ToString(v.StringValue)
	}
	return out
}

type endpointView struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
	AWS  *struct {
		TargetARN string `json:"target_arn"`
		RoleARN   string `json:"role_arn"`
	} `json:"aws"`
}

// Issue 28 item 2: an account's SQS queue, SNS topic and EventBridge bus
// get its events as the customer's role, assumed with the account's
// external id; a queue that does not exist fails the delivery at once
// (aws_not_found), and a target in a region the deployment does not serve
// is refused at registration.
func TestAWSDestinationsDeliverThroughTheCustomersRole(t *testing.T) {
	cfg := localStackAWS(t)
	h := start(t, opts{awsDest: &cfg, env: map[string]string{"DESTINATION_REGIONS": cfg.Region}})
	_, key := h.account(t)
	var acct struct {
		AWSExternalID string `json:"aws_external_id"`
	}
	if st := h.call(t, key, "GET", "/v1/account", nil, &acct); st != 200 || acct.AWSExternalID == "" {
		t.Fatalf("account: %d %+v", st, acct)
	}

	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	account, region := aws.ToString(id.Account), cfg.Region
	role := fmt.Sprintf("arn:aws:iam::%s:role/gifq-e2e-customer", account)
	// AssumeRole with the account's ExternalId gives credentials.
	assumed, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role),
		RoleSessionName: aws.String("gifq-webhooks"), ExternalId: aws.String(acct.AWSExternalID)})
	if err != nil || assumed.Credentials == nil || aws.ToString(assumed.Credentials.AccessKeyId) == "" {
		t.Fatalf("AssumeRole: %v", err)
	}

	suffix := fmt.Sprint(time.Now().UnixNano())
	sq := sqs.NewFromConfig(cfg)
	queueURL, queueARN := customerQueue(t, sq, "gifq-dest-sqs-"+suffix)

	sn := sns.NewFromConfig(cfg)
	topic, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("gifq-dest-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sn.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: topic.TopicArn}) })
	snsQueueURL, snsQueueARN := customerQueue(t, sq, "gifq-dest-sns-"+suffix)
	if _, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(snsQueueARN),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}

	eb := eventbridge.NewFromConfig(cfg)
	bus, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("gifq-dest-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String("gifq-dest-" + suffix)}) })
	ebQueueURL, ebQueueARN := customerQueue(t, sq, "gifq-dest-eb-"+suffix)
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("gifq-webhooks"), EventBusName: bus.EventBusArn,
		EventPattern: aws.String(`{"source":["` + destination.EventBridgeSource + `"],"detail-type":["payout.fulfilled"]}`)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String("gifq-webhooks"), EventBusName: bus.EventBusArn, Ids: []string{"q"}})
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String("gifq-webhooks"), EventBusName: bus.EventBusArn})
	})
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("gifq-webhooks"), EventBusName: bus.EventBusArn,
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(ebQueueARN)}}}); err != nil {
		t.Fatal(err)
	}

	register := func(typ domain.DestinationType, target string) endpointView {
		t.Helper()
		var ep endpointView
		body := map[string]any{"type": typ, "aws": map[string]string{"target_arn": target, "role_arn": role}}
		if st := h.call(t, key, "POST", "/v1/endpoints", body, &ep); st != 201 || ep.Type != string(typ) || ep.AWS == nil || ep.AWS.TargetARN != target {
			t.Fatalf("register %s: %d %+v", typ, st, ep)
		}
		return ep
	}
	toQueue := register(domain.DestinationSQS, queueARN)
	toTopic := register(domain.DestinationSNS, aws.ToString(topic.TopicArn))
	toBus := register(domain.DestinationEventBridge, aws.ToString(bus.EventBusArn))
	missing := register(domain.DestinationSQS, fmt.Sprintf("arn:aws:sqs:%s:%s:gifq-dest-missing-%s", region, account, suffix))

	// A region the deployment does not deliver to: 422, nothing stored.
	var refused struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	other := map[string]any{"type": "aws_sqs", "aws": map[string]string{"target_arn": "arn:aws:sqs:ap-south-2:" + account + ":q", "role_arn": role}}
	if st := h.call(t, key, "POST", "/v1/endpoints", other, &refused); st != 422 || refused.Error.Code != "invalid_destination" {
		t.Fatalf("a region not served: %d %+v", st, refused)
	}

	ev := h.publish(t, key, payout)
	deliveries := map[string]string{} // endpoint -> delivery
	for _, d := range ev.Deliveries {
		deliveries[d.EndpointID] = d.ID
	}
	for _, ep := range []endpointView{toQueue, toTopic, toBus} {
		d := h.waitFor(t, key, deliveries[ep.ID], 60*time.Second, func(d deliveryOut) bool { return d.Status != "pending" })
		if d.Status != "delivered" || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != 200 {
			t.Fatalf("%s: %+v", ep.Type, d)
		}
	}
	failed := h.waitFor(t, key, deliveries[missing.ID], 60*time.Second, func(d deliveryOut) bool { return d.Status != "pending" })
	if failed.Status != "failed" || failed.FailReason != "rejected" || len(failed.Attempts) != 1 || failed.Attempts[0].ErrorClass != "aws_not_found" {
		t.Fatalf("a missing queue: %+v", failed)
	}

	wantAttrs := func(what string, m sqstypes.Message, endpointID string) {
		t.Helper()
		got := attrs(m)
		want := map[string]string{destination.AttrWebhookID: deliveries[endpointID], destination.AttrEventID: ev.ID,
			destination.AttrEventType: "payout.fulfilled", destination.AttrAttempt: "1"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: attribute %s = %q, want %q (all: %v)", what, k, got[k], v, got)
			}
		}
	}
	m := receiveOne(t, sq, queueURL)
	if aws.ToString(m.Body) != payout {
		t.Fatalf("SQS body %q", aws.ToString(m.Body))
	}
	wantAttrs("SQS", m, toQueue.ID)
	m = receiveOne(t, sq, snsQueueURL)
	if aws.ToString(m.Body) != payout {
		t.Fatalf("SNS body %q", aws.ToString(m.Body))
	}
	wantAttrs("SNS", m, toTopic.ID)

	m = receiveOne(t, sq, ebQueueURL)
	var event struct {
		Source     string             `json:"source"`
		DetailType string             `json:"detail-type"`
		Detail     destination.Detail `json:"detail"`
	}
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &event); err != nil {
		t.Fatalf("EventBridge event %s: %v", aws.ToString(m.Body), err)
	}
	if event.Source != destination.EventBridgeSource || event.DetailType != "payout.fulfilled" ||
		event.Detail.WebhookID != deliveries[toBus.ID] || event.Detail.EventID != ev.ID || event.Detail.Attempt != 1 || !sameJSON(t, event.Detail.Body, payout) {
		t.Fatalf("EventBridge event: %s", aws.ToString(m.Body))
	}
}

func sameJSON(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}
