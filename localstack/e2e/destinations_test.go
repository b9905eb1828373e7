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
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/awsdest"
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

// customer is a customer's AWS account on LocalStack: a queue, a topic
// with a queue subscribed (raw delivery, so the attributes arrive as the
// queue's), an event bus whose rule sends our events to a queue, and a role.
type customer struct {
	cfg                   aws.Config // the customer's own credentials
	account, region, role string
	queueURL, queueARN    string
	topicARN, topicQueue  string
	busARN, busQueue      string
}

// customerAccount is the customer's AWS account on LocalStack, which takes
// a 12-digit access key id as the account: never the deployment's own
// (LocalStack's default, 000000000000), whose roles a deployment refuses.
const customerAccount = "111111111111"

// newCustomer makes the customer's resources with the customer's own
// credentials (ours are cfg's).
func newCustomer(t *testing.T, ours aws.Config) customer {
	t.Helper()
	cfg := ours.Copy()
	cfg.Credentials = credentials.NewStaticCredentialsProvider(customerAccount, "test", "")
	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	c := customer{cfg: cfg, account: aws.ToString(id.Account), region: cfg.Region}
	if c.account != customerAccount {
		t.Fatalf("the customer's calls run in account %s, want %s (LocalStack's multi-account namespacing)", c.account, customerAccount)
	}
	c.role = fmt.Sprintf("arn:aws:iam::%s:role/gifq-e2e-customer", c.account)
	suffix := fmt.Sprint(time.Now().UnixNano())
	sq := sqs.NewFromConfig(cfg)
	c.queueURL, c.queueARN = customerQueue(t, sq, "gifq-dest-sqs-"+suffix)

	sn := sns.NewFromConfig(cfg)
	topic, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("gifq-dest-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sn.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: topic.TopicArn}) })
	c.topicARN = aws.ToString(topic.TopicArn)
	var subQueueARN string
	c.topicQueue, subQueueARN = customerQueue(t, sq, "gifq-dest-sns-"+suffix)
	if _, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(subQueueARN),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}

	eb := eventbridge.NewFromConfig(cfg)
	busName := aws.String("gifq-dest-" + suffix)
	bus, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: busName})
	if err != nil {
		t.Fatal(err)
	}
	c.busARN = aws.ToString(bus.EventBusArn)
	t.Cleanup(func() { _, _ = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: busName}) })
	var busQueueARN string
	c.busQueue, busQueueARN = customerQueue(t, sq, "gifq-dest-eb-"+suffix)
	rule := aws.String("gifq-webhooks")
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: rule, EventBusName: busName,
		EventPattern: aws.String(`{"source":["` + awsdest.EventBridgeSource + `"],"detail-type":["payout.fulfilled"]}`)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: rule, EventBusName: busName, Ids: []string{"q"}})
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: rule, EventBusName: busName})
	})
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: rule, EventBusName: busName,
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(busQueueARN)}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// landed is what one send should have put in the customer's queue.
type landed struct {
	webhookID, eventID, attempt string
}

// checkLanded reads the three queues: the SQS and SNS messages carry the
// body byte for byte and the ids as attributes; the EventBridge event has
// our source, the event type as its detail-type, and the ids and body in
// its detail.
func checkLanded(t *testing.T, cfg aws.Config, c customer, sqsWant, snsWant, busWant landed) {
	t.Helper()
	sq := sqs.NewFromConfig(cfg)
	wantAttrs := func(what string, m sqstypes.Message, w landed) {
		t.Helper()
		if aws.ToString(m.Body) != payout {
			t.Errorf("%s body %q", what, aws.ToString(m.Body))
		}
		got := attrs(m)
		want := map[string]string{awsdest.AttrWebhookID: w.webhookID, awsdest.AttrEventID: w.eventID,
			awsdest.AttrEventType: "payout.fulfilled", awsdest.AttrAttempt: w.attempt}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: attribute %s = %q, want %q (all: %v)", what, k, got[k], v, got)
			}
		}
	}
	wantAttrs("SQS", receiveOne(t, sq, c.queueURL), sqsWant)
	wantAttrs("SNS", receiveOne(t, sq, c.topicQueue), snsWant)

	m := receiveOne(t, sq, c.busQueue)
	var event struct {
		Source     string         `json:"source"`
		DetailType string         `json:"detail-type"`
		Detail     awsdest.Detail `json:"detail"`
	}
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &event); err != nil {
		t.Fatalf("EventBridge event %s: %v", aws.ToString(m.Body), err)
	}
	if event.Source != awsdest.EventBridgeSource || event.DetailType != "payout.fulfilled" || event.Detail.WebhookID != busWant.webhookID ||
		event.Detail.EventID != busWant.eventID || fmt.Sprint(event.Detail.Attempt) != busWant.attempt || !sameJSON(t, event.Detail.Body, payout) {
		t.Errorf("EventBridge event: %s", aws.ToString(m.Body))
	}
}

// The AWS provider on its own: Check assumes the role with an ExternalId,
// Send writes as it to each kind of target, and a missing queue is
// aws_not_found, failed for good.
func TestAWSProviderWritesAsTheCustomersRole(t *testing.T) {
	cfg := localStackAWS(t)
	c := newCustomer(t, cfg)
	p := &awsdest.AWS{Base: cfg, Regions: []string{c.region}}
	ext := domain.NewExternalID()
	dest := func(typ domain.DestinationType, target string) *domain.Destination {
		return &domain.Destination{Type: typ, TargetARN: target, RoleARN: c.role, ExternalID: ext}
	}
	if err := p.Check(ctx, *dest(domain.DestinationSQS, c.queueARN)); err != nil {
		t.Fatalf("check: %v", err)
	}
	send := func(d *domain.Destination, id string) destination.Outcome {
		return p.Send(ctx, destination.Request{Body: []byte(payout), EventType: "payout.fulfilled", EventID: "evt_" + id,
			DeliveryID: "dlv_" + id, AttemptID: "att_" + id, AttemptNum: 3, Destination: d})
	}
	for _, tt := range []struct {
		id string
		d  *domain.Destination
	}{{"sqs", dest(domain.DestinationSQS, c.queueARN)}, {"sns", dest(domain.DestinationSNS, c.topicARN)}, {"bus", dest(domain.DestinationEventBridge, c.busARN)}} {
		res := send(tt.d, tt.id)
		if res.Verdict != destination.Delivered || res.Response == "" {
			t.Fatalf("%s: %+v", tt.id, res)
		}
	}
	checkLanded(t, c.cfg, c, landed{"dlv_sqs", "evt_sqs", "3"}, landed{"dlv_sns", "evt_sns", "3"}, landed{"dlv_bus", "evt_bus", "3"})

	res := send(dest(domain.DestinationSQS, fmt.Sprintf("arn:aws:sqs:%s:%s:gifq-dest-missing", c.region, c.account)), "missing")
	if res.Class != awsdest.ErrNotFound || res.Verdict != destination.Rejected {
		t.Fatalf("a missing queue: %+v", res)
	}
}

// End to end: an account registers its SQS queue, SNS
// topic and EventBridge bus through the API (the role assumed once with its
// external id), and the worker delivers one event to each as the role; a
// queue that does not exist fails the delivery at once (aws_not_found), and
// a target in a region the deployment does not serve is refused. The
// worker must pass the endpoint's destination (destination.Request.Destination).
func TestAWSDestinationsDeliverThroughTheCustomersRole(t *testing.T) {
	cfg := localStackAWS(t)
	// Our own account: a deployed stack has it as DEPLOYMENT_ACCOUNT_ID.
	us, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	ours := aws.ToString(us.Account)
	h := start(t, opts{awsDest: &cfg, env: map[string]string{"DESTINATION_REGIONS": cfg.Region, "DEPLOYMENT_ACCOUNT_ID": ours}})
	_, key := h.account(t)
	var acct struct {
		AWSExternalID string `json:"aws_external_id"`
	}
	if st := h.call(t, key, "GET", "/v1/account", nil, &acct); st != 200 || acct.AWSExternalID == "" {
		t.Fatalf("account: %d %+v", st, acct)
	}
	c := newCustomer(t, cfg)
	// AssumeRole with the account's ExternalId gives credentials.
	assumed, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(c.role),
		RoleSessionName: aws.String("gifq-webhooks"), ExternalId: aws.String(acct.AWSExternalID)})
	if err != nil || assumed.Credentials == nil || aws.ToString(assumed.Credentials.AccessKeyId) == "" {
		t.Fatalf("AssumeRole: %v", err)
	}

	register := func(typ domain.DestinationType, target string) endpointView {
		t.Helper()
		var ep endpointView
		body := map[string]any{"type": typ, "aws": map[string]string{"target_arn": target, "role_arn": c.role}}
		if st := h.call(t, key, "POST", "/v1/endpoints", body, &ep); st != 201 || ep.Type != string(typ) || ep.AWS == nil || ep.AWS.TargetARN != target {
			t.Fatalf("register %s: %d %+v", typ, st, ep)
		}
		return ep
	}
	toQueue := register(domain.DestinationSQS, c.queueARN)
	toTopic := register(domain.DestinationSNS, c.topicARN)
	toBus := register(domain.DestinationEventBridge, c.busARN)
	missing := register(domain.DestinationSQS, fmt.Sprintf("arn:aws:sqs:%s:%s:gifq-dest-missing", c.region, c.account))

	// A role in the deployment's own account: 422, nothing stored.
	var ownRole struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	mine := map[string]any{"type": "aws_sqs", "aws": map[string]string{"target_arn": c.queueARN, "role_arn": "arn:aws:iam::" + ours + ":role/gifq-e2e-customer"}}
	if st := h.call(t, key, "POST", "/v1/endpoints", mine, &ownRole); st != 422 || ownRole.Error.Code != "invalid_destination" || !strings.Contains(ownRole.Error.Message, "own AWS account") {
		t.Fatalf("a role in the deployment's own account: %d %+v", st, ownRole)
	}

	// A region the deployment does not deliver to: 422, nothing stored.
	var refused struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	other := map[string]any{"type": "aws_sqs", "aws": map[string]string{"target_arn": "arn:aws:sqs:ap-south-2:" + c.account + ":q", "role_arn": c.role}}
	if st := h.call(t, key, "POST", "/v1/endpoints", other, &refused); st != 422 || refused.Error.Code != "invalid_destination" {
		t.Fatalf("a region not served: %d %+v", st, refused)
	}

	ev := h.publish(t, key, payout)
	deliveries := map[string]string{} // endpoint -> delivery
	for _, d := range ev.Deliveries {
		deliveries[d.EndpointID] = d.ID
	}
	// An attempt the HTTP sender made (no URL: a network error) means the
	// worker did not hand the router the endpoint's destination.
	settledOrSentAsHTTP := func(d deliveryOut) bool {
		return d.Status != "pending" || len(d.Attempts) > 0 && d.Attempts[0].ErrorClass == "network"
	}
	for _, ep := range []endpointView{toQueue, toTopic, toBus} {
		d := h.waitFor(t, key, deliveries[ep.ID], 60*time.Second, settledOrSentAsHTTP)
		if d.Status == "pending" {
			t.Fatalf("%s: the attempt went to the HTTP sender: the worker must pass destination.Request{..., Destination: ep.Destination}: %+v", ep.Type, d)
		}
		// An AWS destination has no status of its own: none is recorded.
		if d.Status != "delivered" || len(d.Attempts) != 1 || d.Attempts[0].Outcome != "delivered" || d.Attempts[0].StatusCode != 0 {
			t.Fatalf("%s: %+v", ep.Type, d)
		}
	}
	failed := h.waitFor(t, key, deliveries[missing.ID], 60*time.Second, func(d deliveryOut) bool { return d.Status != "pending" })
	if failed.Status != "failed" || failed.FailReason != "rejected" || len(failed.Attempts) != 1 || failed.Attempts[0].ErrorClass != "aws_not_found" {
		t.Fatalf("a missing queue: %+v", failed)
	}
	checkLanded(t, c.cfg, c, landed{deliveries[toQueue.ID], ev.ID, "1"}, landed{deliveries[toTopic.ID], ev.ID, "1"}, landed{deliveries[toBus.ID], ev.ID, "1"})

	// A resend goes the same way: a manual attempt (number 0) to the queue.
	if st := h.call(t, key, "POST", "/v1/deliveries/"+deliveries[toQueue.ID]+"/resend", nil, nil); st != 202 {
		t.Fatalf("resend: %d", st)
	}
	m := receiveOne(t, sqs.NewFromConfig(c.cfg), c.queueURL)
	if got := attrs(m); aws.ToString(m.Body) != payout || got[awsdest.AttrWebhookID] != deliveries[toQueue.ID] || got[awsdest.AttrAttempt] != "0" {
		t.Fatalf("resent: %s %v", aws.ToString(m.Body), got)
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

// customerStream makes a Kinesis data stream in the customer's account and
// waits until it is active: its ARN.
func customerStream(t *testing.T, c *kinesis.Client, name string) string {
	t.Helper()
	if _, err := c.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(1)}); err != nil {
		t.Fatalf("create stream (LocalStack's Kinesis needs its kinesis-local backend: localstack/host.sh): %v", err)
	}
	t.Cleanup(func() { _, _ = c.DeleteStream(ctx, &kinesis.DeleteStreamInput{StreamName: aws.String(name)}) })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		out, err := c.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		if err == nil && out.StreamDescriptionSummary.StreamStatus == kinesistypes.StreamStatusActive {
			return aws.ToString(out.StreamDescriptionSummary.StreamARN)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("stream %s never active", name)
	return ""
}

// readRecords waits for n records on the stream's (one) shard.
func readRecords(t *testing.T, c *kinesis.Client, arn string, n int) []kinesistypes.Record {
	t.Helper()
	shards, err := c.ListShards(ctx, &kinesis.ListShardsInput{StreamARN: aws.String(arn)})
	if err != nil || len(shards.Shards) != 1 {
		t.Fatalf("shards: %v %+v", err, shards)
	}
	it, err := c.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamARN: aws.String(arn), ShardId: shards.Shards[0].ShardId,
		ShardIteratorType: kinesistypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	var got []kinesistypes.Record
	iter := it.ShardIterator
	for deadline := time.Now().Add(60 * time.Second); len(got) < n && time.Now().Before(deadline); {
		out, err := c.GetRecords(ctx, &kinesis.GetRecordsInput{StreamARN: aws.String(arn), ShardIterator: iter})
		if err != nil {
			t.Fatal(err)
		}
		got, iter = append(got, out.Records...), out.NextShardIterator
		if len(got) < n {
			time.Sleep(300 * time.Millisecond)
		}
	}
	if len(got) != n {
		t.Fatalf("%d records on %s, want %d", len(got), arn, n)
	}
	return got
}

// Kinesis, the destination added as a package and a registration line,
// end to end: registered through the API (its role assumed with the
// account's external id), the worker puts one record per attempt as the
// role, partitioned by the event's id, the webhook's ids beside the body;
// a resend is a second record (attempt 0).
func TestKinesisDestinationDeliversThroughTheCustomersRole(t *testing.T) {
	cfg := localStackAWS(t)
	h := start(t, opts{awsDest: &cfg, env: map[string]string{"DESTINATION_REGIONS": cfg.Region}})
	_, key := h.account(t)
	c := newCustomer(t, cfg)
	kc := kinesis.NewFromConfig(c.cfg)
	arn := customerStream(t, kc, fmt.Sprint("gifq-dest-", time.Now().UnixNano()))

	var ep endpointView
	body := map[string]any{"type": "aws_kinesis", "aws": map[string]string{"target_arn": arn, "role_arn": c.role}}
	if st := h.call(t, key, "POST", "/v1/endpoints", body, &ep); st != 201 || ep.Type != "aws_kinesis" || ep.AWS == nil || ep.AWS.TargetARN != arn {
		t.Fatalf("register: %d %+v", st, ep)
	}
	ev := h.publish(t, key, payout)
	if len(ev.Deliveries) != 1 {
		t.Fatalf("%+v", ev)
	}
	dlv := ev.Deliveries[0].ID
	d := h.waitFor(t, key, dlv, 60*time.Second, func(d deliveryOut) bool { return d.Status != "pending" })
	if d.Status != "delivered" || len(d.Attempts) != 1 || !strings.HasPrefix(d.Attempts[0].Response, "SequenceNumber ") {
		t.Fatalf("%+v", d)
	}
	if st := h.call(t, key, "POST", "/v1/deliveries/"+dlv+"/resend", nil, nil); st != 202 {
		t.Fatalf("resend: %d", st)
	}
	for i, r := range readRecords(t, kc, arn, 2) {
		var got awsdest.Detail
		if err := json.Unmarshal(r.Data, &got); err != nil {
			t.Fatalf("record %s: %v", r.Data, err)
		}
		if aws.ToString(r.PartitionKey) != ev.ID || got.WebhookID != dlv || got.EventID != ev.ID || got.EventType != "payout.fulfilled" ||
			got.Attempt != []int{1, 0}[i] || !sameJSON(t, got.Body, payout) {
			t.Errorf("record %d: key %s, %s", i, aws.ToString(r.PartitionKey), r.Data)
		}
	}
}

// Bodies ingest accepts reach AWS targets: U+FFFE (valid JSON, refused by
// SQS in a message) arrives as the same JSON; and a manual resend to a
// FIFO queue within its 5-minute deduplication window arrives as a second
// message, not dropped as a duplicate while the log says delivered.
func TestAWSTargetsTakeWhatIngestAccepted(t *testing.T) {
	cfg := localStackAWS(t)
	c := newCustomer(t, cfg)
	p := &awsdest.AWS{Base: cfg, Regions: []string{c.region}}
	sq := sqs.NewFromConfig(c.cfg)
	ext := domain.NewExternalID()

	odd := "{\"event\":\"payout.fulfilled\",\"note\":\"a\uFFFEb\"}"
	res := p.Send(ctx, destination.Request{Body: []byte(odd), EventType: "payout.fulfilled", EventID: "evt_odd", DeliveryID: "dlv_odd",
		AttemptID: "att_odd", AttemptNum: 1, Destination: &domain.Destination{Type: domain.DestinationSQS, TargetARN: c.queueARN, RoleARN: c.role, ExternalID: ext}})
	if res.Verdict != destination.Delivered {
		t.Fatalf("U+FFFE: %+v", res)
	}
	if m := receiveOne(t, sq, c.queueURL); !sameJSON(t, json.RawMessage(aws.ToString(m.Body)), odd) {
		t.Fatalf("U+FFFE arrived as %q", aws.ToString(m.Body))
	}

	name := fmt.Sprint("gifq-dest-fifo-", time.Now().UnixNano(), ".fifo")
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	fifo := &domain.Destination{Type: domain.DestinationSQS, TargetARN: fmt.Sprintf("arn:aws:sqs:%s:%s:%s", c.region, c.account, name), RoleARN: c.role, ExternalID: ext}
	for _, r := range []destination.Request{
		{AttemptID: "att_1", AttemptNum: 1}, // the series' attempt
		{AttemptID: "att_2", AttemptNum: 0}, // a manual resend a moment later
	} {
		r.Body, r.EventType, r.EventID, r.DeliveryID, r.Destination = []byte(payout), "payout.fulfilled", "evt_fifo", "dlv_fifo", fifo
		if res := p.Send(ctx, r); res.Verdict != destination.Delivered {
			t.Fatalf("%s: %+v", r.AttemptID, res)
		}
	}
	got := map[string]bool{}
	for range 2 {
		m := receiveOne(t, sq, aws.ToString(q.QueueUrl))
		got[attrs(m)[awsdest.AttrAttemptID]] = true
		_, _ = sq.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle})
	}
	if !got["att_1"] || !got["att_2"] {
		t.Fatalf("both attempts must arrive: %v", got)
	}
}
