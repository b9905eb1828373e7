package awsdest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/sender"
)

// The message attributes (SQS, SNS) every AWS delivery carries; an
// EventBridge event carries the same in its detail.
const (
	AttrWebhookID = "gifq-webhook-id" // the delivery: the same on every attempt, the receiver's idempotency key
	AttrEventID   = "gifq-event-id"
	AttrEventType = "gifq-event-type"
	AttrAttemptID = "gifq-attempt-id"
	AttrAttempt   = "gifq-attempt"
)

// EventBridgeSource is every EventBridge event's source; its detail-type is
// the event type (cut to EventBridge's 128 characters; the detail has it
// whole). A customer's rule matches {"source":["gifq.webhooks"]}.
const EventBridgeSource = "gifq.webhooks"

const maxDetailType = 128

// SessionDuration is how long assumed credentials last (STS's least):
// cached until a minute before they expire, one AssumeRole per role per
// quarter hour per warm function.
const SessionDuration = 15 * time.Minute

// AWS reaches customers' SQS queues, SNS topics and EventBridge buses as
// their roles: sts:AssumeRole with the account's ExternalId, the
// credentials cached per role for their lifetime.
type AWS struct {
	// Base is our own configuration (region, HTTP client, endpoint
	// overrides); its credentials are the function's role, which assumes
	// the customers'.
	Base aws.Config
	// Regions are those a target may be in (config DESTINATION_REGIONS;
	// by default the stack's own).
	Regions []string
	// OwnAccount is the deployment's own AWS account (config
	// DEPLOYMENT_ACCOUNT_ID): a role in it is refused, at registration and
	// at delivery. Such a role trusts our account, not a customer's, and
	// the stack's IAM policy denies assuming it as well. Empty: none refused.
	OwnAccount string
	// DefaultTimeout bounds an attempt whose request has none.
	DefaultTimeout time.Duration
	Now            func() time.Time // the attempt's clock; nil: time.Now

	once  sync.Once
	sts   *sts.Client
	mu    sync.Mutex
	creds map[string]*aws.CredentialsCache // role ARN + external id
}

// maxCachedRoles bounds the credential cache; past it the cache starts
// over (a warm function serves far fewer roles).
const maxCachedRoles = 4096

func (p *AWS) init() {
	p.once.Do(func() {
		p.sts = sts.NewFromConfig(p.Base)
		p.creds = map[string]*aws.CredentialsCache{}
	})
}

func (p *AWS) assumeOptions(d domain.Destination) func(*stscreds.AssumeRoleOptions) {
	return func(o *stscreds.AssumeRoleOptions) {
		o.ExternalID = aws.String(d.ExternalID)
		o.RoleSessionName = "gifq-webhooks" // what the customer's CloudTrail shows for our session
		o.Duration = SessionDuration
	}
}

// credentials are d's role's, cached for their lifetime.
func (p *AWS) credentials(d domain.Destination) *aws.CredentialsCache {
	p.init()
	k := d.RoleARN + "\x00" + d.ExternalID
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.creds[k]
	if !ok {
		if len(p.creds) >= maxCachedRoles {
			p.creds = map[string]*aws.CredentialsCache{}
		}
		c = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(p.sts, d.RoleARN, p.assumeOptions(d)),
			func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = time.Minute })
		p.creds[k] = c
	}
	return c
}

// Validate checks the ARNs, their service, partition and region, and that
// the role is not in the deployment's own account.
func (p *AWS) Validate(d domain.Destination) error {
	_, err := p.target(d)
	return err
}

// target is ParseTarget, refusing a role in the deployment's own account.
func (p *AWS) target(d domain.Destination) (Target, error) {
	t, err := ParseTarget(d, p.Regions)
	if err == nil && p.OwnAccount != "" && t.Role.AccountID == p.OwnAccount {
		return Target{}, &destination.ConfigError{Field: "role_arn", Message: fmt.Sprintf(
			"account %s is this service's own AWS account; the role must be in your account", p.OwnAccount)}
	}
	return t, err
}

// Check assumes the role once, fresh (not from the cache): the customer's
// trust policy as it is now, with their ExternalId. A refusal is a
// destination.CheckError naming the AWS error; our own failure to reach STS is a plain
// error.
func (p *AWS) Check(ctx context.Context, d domain.Destination) error {
	if err := p.Validate(d); err != nil {
		return err
	}
	p.init()
	_, err := stscreds.NewAssumeRoleProvider(p.sts, d.RoleARN, p.assumeOptions(d)).Retrieve(ctx)
	if err == nil {
		return nil
	}
	// Refused (or an answer we do not know): the customer's to fix. Throttled,
	// unavailable or unreachable: ours, a 500 that says nothing of their role.
	if f := classify(StageAssumeRole, err); f.class == retry.ErrAWSAssumeRole || f.class == retry.ErrAWSError {
		return &destination.CheckError{Code: f.code, Message: f.message}
	}
	return err
}

// Send makes one attempt: the role's credentials (cached), then one
// SendMessage, Publish or PutEvents with the SDK's own retries off, so the
// attempt log's attempt is one request and the contract's schedule is the
// only retry.
func (p *AWS) Send(ctx context.Context, r sender.Request) sender.Result {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	start := now()
	res := sender.Result{StartedAt: start}
	done := func(f failure) sender.Result {
		res.Duration = now().Sub(start)
		res.ErrorClass, res.Error = f.class, f.text()
		return res
	}
	if r.Destination == nil {
		return done(failure{class: retry.ErrAWSInvalid, message: "no destination"})
	}
	d := *r.Destination
	t, err := p.target(d)
	if err != nil { // stored before a deployment narrowed its regions: the customer must move it
		return done(failure{class: retry.ErrAWSInvalid, message: err.Error()})
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = p.DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	creds := p.credentials(d)
	if _, err := creds.Retrieve(ctx); err != nil {
		return done(classify(StageAssumeRole, err))
	}
	cfg := p.Base.Copy()
	cfg.Credentials, cfg.Region, cfg.RetryMaxAttempts = creds, t.ARN.Region, 1
	var id string
	switch d.Type {
	case domain.DestinationSQS:
		id, err = sendSQS(ctx, cfg, t, r)
	case domain.DestinationSNS:
		id, err = publishSNS(ctx, cfg, t, r)
	case domain.DestinationEventBridge:
		id, err = putEvent(ctx, cfg, t, r)
	}
	if err != nil {
		return done(classify(StagePublish, err))
	}
	res.StatusCode, res.ResponseBody = 200, id
	res.Duration = now().Sub(start)
	return res
}

type attr struct{ name, value string }

func attributes(r sender.Request) []attr {
	return []attr{
		{AttrWebhookID, r.DeliveryID}, {AttrEventID, r.EventID}, {AttrEventType, r.EventType},
		{AttrAttemptID, r.AttemptID}, {AttrAttempt, strconv.Itoa(r.AttemptNum)},
	}
}

func sendSQS(ctx context.Context, cfg aws.Config, t Target, r sender.Request) (string, error) {
	attrs := map[string]sqstypes.MessageAttributeValue{}
	for _, a := range attributes(r) {
		if a.value != "" {
			attrs[a.name] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a.value)}
		}
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(t.QueueURL), MessageBody: aws.String(string(r.Body)), MessageAttributes: attrs}
	if t.FIFO {
		// One group per delivery (webhooks promise no order); the
		// delivery's id deduplicates a retried send within SQS's 5 minutes.
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(r.DeliveryID), aws.String(r.DeliveryID)
	}
	out, err := sqs.NewFromConfig(cfg).SendMessage(ctx, in)
	if err != nil {
		return "", err
	}
	return "MessageId " + aws.ToString(out.MessageId), nil
}

func publishSNS(ctx context.Context, cfg aws.Config, t Target, r sender.Request) (string, error) {
	attrs := map[string]snstypes.MessageAttributeValue{}
	for _, a := range attributes(r) {
		if a.value != "" {
			attrs[a.name] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a.value)}
		}
	}
	in := &sns.PublishInput{TopicArn: aws.String(t.ARN.String()), Message: aws.String(string(r.Body)), MessageAttributes: attrs}
	if t.FIFO {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(r.DeliveryID), aws.String(r.DeliveryID)
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

func putEvent(ctx context.Context, cfg aws.Config, t Target, r sender.Request) (string, error) {
	detail, err := json.Marshal(Detail{WebhookID: r.DeliveryID, EventID: r.EventID, EventType: r.EventType,
		AttemptID: r.AttemptID, Attempt: r.AttemptNum, Body: json.RawMessage(r.Body)})
	if err != nil {
		return "", &smithy.GenericAPIError{Code: "MalformedDetail", Message: "the event body is not JSON"}
	}
	detailType := r.EventType
	if len(detailType) > maxDetailType {
		detailType = detailType[:maxDetailType]
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

// Use makes r deliver SQS, SNS and EventBridge destinations, assuming the
// customers' roles with base's credentials, to targets in regions and
// roles outside ownAccount (the deployment's; "" refuses none), each
// attempt bounded by timeout unless its request says otherwise.
func Use(r *destination.Router, base aws.Config, regions []string, ownAccount string, timeout time.Duration) {
	r.Register(&AWS{Base: base, Regions: regions, OwnAccount: ownAccount, DefaultTimeout: timeout},
		domain.DestinationSQS, domain.DestinationSNS, domain.DestinationEventBridge)
}
