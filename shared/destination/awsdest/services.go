package awsdest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// Service is one AWS destination type: its config schema, the ARN service
// its targets are in, the check of a target's resource, and the write of
// one attempt. A new AWS destination is a package declaring one (see
// shared/destination/awskinesis) and its line in shared/destination/providers.
type Service struct {
	Schema     destination.Schema
	ARNService string // "sqs": the target ARN's service
	// Resource checks t.ARN.Resource and fills in what the write needs
	// (FIFO, a queue's URL); its error's text is the customer's message.
	Resource func(t *Target) error
	// Put writes one attempt as the role (cfg's credentials) and returns
	// the id the target gave the message.
	Put func(ctx context.Context, cfg aws.Config, t Target, r destination.Request) (string, error)
	// Codes are error codes (lower-cased) only this service answers, and
	// their class; ClassOf maps the rest.
	Codes map[string]string
}

// Services are those one provider serves.
type Services []Service

func (ss Services) of(t domain.DestinationType) (Service, bool) {
	for _, s := range ss {
		if s.Schema.Type == t {
			return s, true
		}
	}
	return Service{}, false
}

func (ss Services) types() []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s.Schema.Type)
	}
	slices.Sort(out)
	return out
}

// Fields are every AWS destination's config: the aws block's target and role.
var Fields = []destination.Field{
	{Name: "target_arn", Label: "Target ARN", Required: true},
	{Name: "role_arn", Label: "Role ARN (trusts our account with your external id)", Example: "arn:aws:iam::123456789012:role/gifq-delivery", Required: true},
}

// Schema is an AWS destination type's schema: the aws block, with example
// as the target's placeholder.
func Schema(t domain.DestinationType, label, example string) destination.Schema {
	fs := slices.Clone(Fields)
	fs[0].Example = example
	return destination.Schema{Type: t, Label: label, Block: "aws", Fields: fs}
}

var (
	queueRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}(\.fifo)?$|^[A-Za-z0-9_-]{1,80}$`)
	topicRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,251}(\.fifo)?$|^[A-Za-z0-9_-]{1,256}$`)
	busRE   = regexp.MustCompile(`^event-bus/[A-Za-z0-9._/-]{1,256}$`)
)

// The built-in AWS services.
var (
	SQS = Service{
		Schema:     Schema(domain.DestinationSQS, "Amazon SQS queue", "arn:aws:sqs:eu-west-1:123456789012:orders"),
		ARNService: "sqs",
		Resource: func(t *Target) error {
			if !queueRE.MatchString(t.ARN.Resource) {
				return errors.New("not a queue name (1 to 80 letters, digits, - and _, or a name ending .fifo)")
			}
			t.FIFO = strings.HasSuffix(t.ARN.Resource, ".fifo")
			t.QueueURL = "https://sqs." + t.ARN.Region + "." + dnsSuffix(t.ARN.Partition) + "/" + t.ARN.AccountID + "/" + t.ARN.Resource
			return nil
		},
		Put: sendSQS,
	}
	SNS = Service{
		Schema:     Schema(domain.DestinationSNS, "Amazon SNS topic", "arn:aws:sns:eu-west-1:123456789012:payouts"),
		ARNService: "sns",
		Resource: func(t *Target) error {
			if !topicRE.MatchString(t.ARN.Resource) {
				return errors.New("not a topic name (1 to 256 letters, digits, - and _, or a name ending .fifo)")
			}
			t.FIFO = strings.HasSuffix(t.ARN.Resource, ".fifo")
			return nil
		},
		Put: publishSNS,
	}
	EventBridge = Service{
		Schema:     Schema(domain.DestinationEventBridge, "Amazon EventBridge bus", "arn:aws:events:eu-west-1:123456789012:event-bus/default"),
		ARNService: "events",
		Resource: func(t *Target) error {
			if !busRE.MatchString(t.ARN.Resource) {
				return errors.New("not an event bus (the resource is event-bus/<name>)")
			}
			return nil
		},
		Put: putEvent,
	}
	// Builtin are the services of this package.
	Builtin = Services{SQS, SNS, EventBridge}
)

type attr struct{ name, value string }

func attributes(r destination.Request) []attr {
	return []attr{
		{AttrWebhookID, r.DeliveryID}, {AttrEventID, r.EventID}, {AttrEventType, r.EventType},
		{AttrAttemptID, r.AttemptID}, {AttrAttempt, strconv.Itoa(r.AttemptNum)},
	}
}

func sendSQS(ctx context.Context, cfg aws.Config, t Target, r destination.Request) (string, error) {
	attrs := map[string]sqstypes.MessageAttributeValue{}
	for _, a := range attributes(r) {
		if a.value != "" {
			attrs[a.name] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a.value)}
		}
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(t.QueueURL), MessageBody: aws.String(MessageBody(r.Body)), MessageAttributes: attrs}
	if t.FIFO {
		// One group per delivery (webhooks promise no order).
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(r.DeliveryID), aws.String(DedupID(r))
	}
	out, err := sqs.NewFromConfig(cfg).SendMessage(ctx, in)
	if err != nil {
		return "", err
	}
	return "MessageId " + aws.ToString(out.MessageId), nil
}

// MaxMessageBytes is what SNS takes in one message (its attributes' names,
// types and values counted) and EventBridge in one entry (source, detail
// type and detail counted): 256 KiB. An event body near ingest's own 256
// KiB does not fit beside our attributes or wrapper.
const MaxMessageBytes = 262_144

// tooLarge is the refusal of a message that cannot fit, made before any
// call: the class is aws_invalid_request (failed at once, not retried) and
// the message says why. SQS is left to the queue, whose maximum its owner
// sets (256 KiB by default, up to 1 MiB): its refusal is classed the same.
func tooLarge(service string, size int) error {
	return &smithy.GenericAPIError{Code: "MessageTooLong", Message: fmt.Sprintf(
		"the message is %d bytes with the webhook's attributes; %s takes at most %d: the event body is too large for this destination",
		size, service, MaxMessageBytes)}
}

// snsSize is an SNS message's size as SNS counts it.
func snsSize(message string, attrs []attr) int {
	n := len(message)
	for _, a := range attrs {
		if a.value != "" {
			n += len(a.name) + len("String") + len(a.value)
		}
	}
	return n
}

func publishSNS(ctx context.Context, cfg aws.Config, t Target, r destination.Request) (string, error) {
	message := MessageBody(r.Body)
	if n := snsSize(message, attributes(r)); n > MaxMessageBytes {
		return "", tooLarge("SNS", n)
	}
	attrs := map[string]snstypes.MessageAttributeValue{}
	for _, a := range attributes(r) {
		if a.value != "" {
			attrs[a.name] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a.value)}
		}
	}
	in := &sns.PublishInput{TopicArn: aws.String(t.ARN.String()), Message: aws.String(message), MessageAttributes: attrs}
	if t.FIFO {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(r.DeliveryID), aws.String(DedupID(r))
	}
	out, err := sns.NewFromConfig(cfg).Publish(ctx, in)
	if err != nil {
		return "", err
	}
	return "MessageId " + aws.ToString(out.MessageId), nil
}

// Detail is an EventBridge event's detail: the webhook's ids beside the
// event body, byte for byte.
type Detail struct {
	WebhookID string          `json:"webhook_id"`
	EventID   string          `json:"event_id"`
	EventType string          `json:"event_type"`
	AttemptID string          `json:"attempt_id"`
	Attempt   int             `json:"attempt"`
	Body      json.RawMessage `json:"body"`
}

// DetailOf is r's ids beside its body (MessageBody).
func DetailOf(r destination.Request) Detail {
	return Detail{WebhookID: r.DeliveryID, EventID: r.EventID, EventType: r.EventType,
		AttemptID: r.AttemptID, Attempt: r.AttemptNum, Body: json.RawMessage(MessageBody(r.Body))}
}

// DedupID is a FIFO target's deduplication id for r: the delivery's, so
// that a retry of the series whose earlier send landed although its answer
// was lost is dropped within the target's 5 minutes; a manual attempt's own
// id, since a resend is asked for and must arrive, not be dropped as a
// duplicate while the attempt log says delivered.
func DedupID(r destination.Request) string {
	if r.AttemptNum == 0 && r.AttemptID != "" {
		return r.AttemptID
	}
	return r.DeliveryID
}

// MessageBody is the body as SQS and SNS take it: the noncharacters U+FFFE
// and U+FFFF, valid in JSON and so accepted by ingest but refused in a
// message, written as JSON escapes. In valid JSON they can only be inside
// strings, where the escape means the same, so the receiver parses the
// same document; every other body is sent byte for byte.
func MessageBody(body []byte) string {
	if !bytes.Contains(body, []byte("\xef\xbf\xbe")) && !bytes.Contains(body, []byte("\xef\xbf\xbf")) {
		return string(body)
	}
	var b strings.Builder
	for _, r := range string(body) {
		switch r {
		case 0xFFFE:
			b.WriteString(`\ufffe`)
		case 0xFFFF:
			b.WriteString(`\uffff`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func putEvent(ctx context.Context, cfg aws.Config, t Target, r destination.Request) (string, error) {
	detail, err := json.Marshal(DetailOf(r))
	if err != nil {
		return "", &smithy.GenericAPIError{Code: "MalformedDetail", Message: "the event body is not JSON"}
	}
	detailType := r.EventType
	if len(detailType) > maxDetailType {
		detailType = detailType[:maxDetailType]
	}
	if n := len(EventBridgeSource) + len(detailType) + len(detail); n > MaxMessageBytes {
		return "", tooLarge("EventBridge", n)
	}
	out, err := eventbridge.NewFromConfig(cfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		EventBusName: aws.String(t.ARN.String()), Source: aws.String(EventBridgeSource), DetailType: aws.String(detailType),
		Detail: aws.String(string(detail)),
	}}})
	if err != nil {
		return "", err
	}
	if len(out.Entries) == 1 && out.Entries[0].ErrorCode != nil {
		// PutEvents answers 200 and reports a refused entry in the entry.
		return "", &smithy.GenericAPIError{Code: aws.ToString(out.Entries[0].ErrorCode), Message: aws.ToString(out.Entries[0].ErrorMessage)}
	}
	if out.FailedEntryCount > 0 || len(out.Entries) != 1 {
		return "", &smithy.GenericAPIError{Code: "InternalFailure", Message: "the event was not accepted"}
	}
	return "EventId " + aws.ToString(out.Entries[0].EventId), nil
}
