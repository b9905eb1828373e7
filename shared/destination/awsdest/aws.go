package awsdest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
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

// AWS reaches customers' AWS targets (Services: SQS queues, SNS topics,
// EventBridge buses, Kinesis streams...) as their roles: sts:AssumeRole
// with the account's ExternalId, the credentials cached per role for their
// lifetime.
type AWS struct {
	// Services are the target types served; nil: Builtin.
	Services Services
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

func (p *AWS) services() Services {
	if p.Services == nil {
		return Builtin
	}
	return p.Services
}

// Schemas are the services' config.
func (p *AWS) Schemas() []destination.Schema {
	out := make([]destination.Schema, len(p.services()))
	for i, s := range p.services() {
		out[i] = s.Schema
	}
	return out
}

// Validate checks the ARNs, their service, partition and region, and that
// the role is not in the deployment's own account.
func (p *AWS) Validate(d domain.Destination) error {
	_, err := p.target(d)
	return err
}

// target is Services.Parse, refusing a role in the deployment's own account.
func (p *AWS) target(d domain.Destination) (Target, error) {
	t, err := p.services().Parse(d, p.Regions)
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
	if f := classify(StageAssumeRole, err); f.class == ErrAssumeRole || f.class == ErrUnknown {
		return &destination.CheckError{Code: f.code, Message: f.message}
	}
	return err
}

// Send makes one attempt: the role's credentials (cached), then one
// write to the target (the service's Put) with the SDK's own retries off,
// so the attempt log's attempt is one request and the contract's schedule
// is the only retry.
func (p *AWS) Send(ctx context.Context, r destination.Request) destination.Outcome {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	start := now()
	done := func(o destination.Outcome) destination.Outcome {
		o.StartedAt, o.Duration = start, now().Sub(start)
		return o
	}
	if r.Destination == nil {
		return done(failure{class: ErrInvalid, message: "no destination"}.outcome())
	}
	d := *r.Destination
	svc, _ := p.services().of(d.Type)
	t, err := p.target(d)
	if err != nil { // stored before a deployment narrowed its regions: the customer must move it
		return done(failure{class: ErrInvalid, message: err.Error()}.outcome())
	}
	switch {
	case !r.Deadline.IsZero():
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.Deadline)
		defer cancel()
	case p.DefaultTimeout > 0:
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.DefaultTimeout)
		defer cancel()
	}
	creds := p.credentials(d)
	if _, err := creds.Retrieve(ctx); err != nil {
		return done(classify(StageAssumeRole, err).outcome())
	}
	cfg := p.Base.Copy()
	cfg.Credentials, cfg.Region, cfg.RetryMaxAttempts = creds, t.ARN.Region, 1
	id, err := svc.Put(ctx, cfg, t, r)
	if err != nil {
		return done(classifyWith(svc.Codes, StagePublish, err).outcome())
	}
	return done(destination.Outcome{Verdict: destination.Delivered, Response: id})
}

// Use makes r deliver to the services' destinations (none given: Builtin),
// assuming the customers' roles with base's credentials, to targets in
// regions and roles outside ownAccount (the deployment's; "" refuses
// none), each attempt bounded by timeout unless its request says
// otherwise.
func Use(r *destination.Router, base aws.Config, regions []string, ownAccount string, timeout time.Duration, services ...Service) {
	r.Register(&AWS{Base: base, Regions: regions, OwnAccount: ownAccount, DefaultTimeout: timeout, Services: services})
}
