package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/awsdest"
	"github.com/gifq/webhooks/shared/domain"
)

// roleGate is the AWS provider's pure part (its ARN rules) with the one
// STS call answered from a table: a role named "refuses" answers
// AccessDenied. localstack/e2e's destinations test makes the real call.
type roleGate struct {
	aws     *awsdest.AWS
	checked []domain.Destination
}

func (g *roleGate) Schemas() []destination.Schema       { return g.aws.Schemas() }
func (g *roleGate) Validate(d domain.Destination) error { return g.aws.Validate(d) }
func (g *roleGate) Check(_ context.Context, d domain.Destination) error {
	g.checked = append(g.checked, d)
	if strings.HasSuffix(d.RoleARN, "/refuses") {
		return &destination.CheckError{Code: "AccessDenied", Message: "User: arn:aws:sts::111111111111:assumed-role/deliver is not authorized to perform: sts:AssumeRole"}
	}
	return nil
}
func (g *roleGate) Send(context.Context, destination.Request) destination.Outcome {
	return destination.Outcome{}
}

func awsFixture(t *testing.T) (*fixture, *roleGate) {
	f := newFixture(t, nil)
	g := &roleGate{aws: &awsdest.AWS{Regions: []string{"eu-west-1"}, OwnAccount: ownAccount}}
	f.app.Destinations.Register(g)
	return f, g
}

const (
	queueARN = "arn:aws:sqs:eu-west-1:123456789012:orders"
	roleARN  = "arn:aws:iam::123456789012:role/gifq-delivery"
	// ownAccount is the deployment's own AWS account (DEPLOYMENT_ACCOUNT_ID).
	ownAccount = "210987654321"
)

// An AWS endpoint is stored with the account's external id after one role
// check, shown with its type and target, and the external id is the
// account's alone.
func TestAWSEndpointRegisteredWithTheAccountsExternalID(t *testing.T) {
	f, g := awsFixture(t)
	acct := f.do(t, f.keyA, "GET", "/v1/account", "")
	ext, _ := acct.body["aws_external_id"].(string)
	if acct.status != 200 || !strings.HasPrefix(ext, "gifq-") || acct.body["id"] != f.acctA {
		t.Fatalf("account: %d %s", acct.status, acct.raw)
	}
	if again := f.do(t, f.keyA, "GET", "/v1/account", ""); again.body["aws_external_id"] != ext {
		t.Fatalf("the external id changed: %s", again.raw)
	}
	if other := f.do(t, f.keyB, "GET", "/v1/account", ""); other.body["aws_external_id"] == ext || other.body["id"] == f.acctA {
		t.Fatalf("another account sees %s", other.raw)
	}

	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"type":"aws_sqs","aws":{"target_arn":"`+queueARN+`","role_arn":"`+roleARN+`"},"event_types":["payout.*"]}`)
	if created.status != 201 || created.body["type"] != "aws_sqs" || created.body["url"] != "" {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	if got := created.body["aws"].(map[string]any); got["target_arn"] != queueARN || got["role_arn"] != roleARN {
		t.Fatalf("aws: %v", got)
	}
	if len(g.checked) != 1 || g.checked[0].ExternalID != ext {
		t.Fatalf("checked %+v, want one check with %s", g.checked, ext)
	}
	id := created.body["id"].(string)
	ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, id)
	if err != nil || ep.Destination == nil || *ep.Destination != (domain.Destination{Type: domain.DestinationSQS, TargetARN: queueARN, RoleARN: roleARN, ExternalID: ext}) {
		t.Fatalf("stored %+v, %v", ep.Destination, err)
	}
	plain := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook"}`)
	if plain.status != 201 || plain.body["type"] != "http" || plain.body["aws"] != nil {
		t.Fatalf("http: %d %s", plain.status, plain.raw)
	}

	// A new role is checked again and replaces the old one.
	role2 := "arn:aws:iam::123456789012:role/other"
	p := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"aws":{"target_arn":"`+queueARN+`","role_arn":"`+role2+`"}}`)
	if p.status != 200 || p.body["aws"].(map[string]any)["role_arn"] != role2 || len(g.checked) != 2 {
		t.Fatalf("patch: %d %s", p.status, p.raw)
	}
}

// Every bad AWS destination is a 422 saying what is wrong, and nothing is
// stored or changed.
func TestAWSEndpointRefusedChangesNothing(t *testing.T) {
	f, g := awsFixture(t)
	body := func(typ, target, role string) string {
		return `{"type":"` + typ + `","aws":{"target_arn":"` + target + `","role_arn":"` + role + `"}}`
	}
	tests := []struct{ body, code, msg string }{
		{`{"type":"ftp","url":"http://127.0.0.1:9/x"}`, "invalid_destination", `is not one this deployment delivers to: http, aws_eventbridge, aws_sns, aws_sqs`},
		{body("aws_sqs", "arn:aws:sqs:eu-west-1:123", roleARN), "invalid_destination", "aws.target_arn: "},
		{body("aws_sqs", "arn:aws:sns:eu-west-1:123456789012:t", roleARN), "invalid_destination", "not sns"},
		{body("aws_sqs", "arn:aws:sqs:us-east-1:123456789012:q", roleARN), "invalid_destination", "region us-east-1 is not one this deployment delivers to (eu-west-1)"},
		{body("aws_sns", "arn:aws:sns:eu-west-1:123456789012:t", "arn:aws:iam::123456789012:user/u"), "invalid_destination", "aws.role_arn: not an IAM role ARN"},
		// A role in the deployment's own account trusts us, not the tenant:
		// refused before any AssumeRole, whatever its name or path.
		{body("aws_sqs", queueARN, "arn:aws:iam::"+ownAccount+":role/ops/admin"), "invalid_destination", "aws.role_arn: account " + ownAccount + " is this service's own AWS account"},
		{body("aws_sqs", queueARN, "arn:aws:iam::123456789012:role/refuses"), "role_not_assumable", "AccessDenied: User: arn:aws:sts::111111111111:assumed-role/deliver is not authorized"},
		{`{"type":"aws_sqs","url":"http://127.0.0.1:9/x","aws":{"target_arn":"` + queueARN + `","role_arn":"` + roleARN + `"}}`, "invalid_destination", "has no url"},
		{`{"type":"aws_sqs"}`, "invalid_destination", "needs aws.target_arn"},
		{`{"url":"http://127.0.0.1:9/x","aws":{"target_arn":"` + queueARN + `","role_arn":"` + roleARN + `"}}`, "invalid_destination", "aws is only for"},
		{`{"type":"aws_sqs","aws":{"target_arn":"` + queueARN + `","role_arn":"` + roleARN + `"},"settings":{"headers":{"X-A":"b"}}}`, "invalid_settings", "only http endpoints send headers"},
	}
	for _, tt := range tests {
		a := f.do(t, f.keyA, "POST", "/v1/endpoints", tt.body)
		if a.status != 422 || a.code() != tt.code || !strings.Contains(a.raw, tt.msg) {
			t.Errorf("%s: %d %s, want %s with %q", tt.body, a.status, a.raw, tt.code, tt.msg)
		}
	}
	if list := f.do(t, f.keyA, "GET", "/v1/endpoints", ""); list.raw != `{"data":[],"next_cursor":""}` {
		t.Fatalf("something was stored: %s", list.raw)
	}

	created := f.do(t, f.keyA, "POST", "/v1/endpoints", body("aws_sqs", queueARN, roleARN))
	id := created.body["id"].(string)
	before := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, "").raw
	for _, patch := range []string{
		`{"aws":{"target_arn":"` + queueARN + `","role_arn":"arn:aws:iam::123456789012:role/refuses"}}`,
		`{"aws":{"target_arn":"` + queueARN + `","role_arn":"arn:aws:iam::` + ownAccount + `:role/gifq-delivery"}}`,
		`{"aws":{"target_arn":"arn:aws:sqs:eu-west-1:123456789012:","role_arn":"` + roleARN + `"}}`,
		`{"url":"http://127.0.0.1:9/x"}`,
	} {
		if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, patch); a.status != 422 {
			t.Errorf("%s: %d %s", patch, a.status, a.raw)
		}
	}
	if after := f.do(t, f.keyA, "GET", "/v1/endpoints/"+id, "").raw; after != before {
		t.Fatalf("changed:\n%s\n%s", before, after)
	}
	for _, d := range g.checked {
		if strings.Contains(d.RoleARN, "::"+ownAccount+":") {
			t.Fatalf("a role in the deployment's own account was assumed: %s", d.RoleARN)
		}
	}
	web := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook"}`)
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+web.body["id"].(string), `{"aws":{"target_arn":"`+queueARN+`","role_arn":"`+roleARN+`"}}`); a.status != 422 || !strings.Contains(a.raw, "a type cannot change") {
		t.Fatalf("http to aws: %d %s", a.status, a.raw)
	}
}

// A deployment without AWS destinations says so.
func TestAWSEndpointWhereNotDelivered(t *testing.T) {
	f := newFixture(t, nil)
	a := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"type":"aws_eventbridge","aws":{"target_arn":"arn:aws:events:eu-west-1:123456789012:event-bus/default","role_arn":"`+roleARN+`"}}`)
	if a.status != 422 || !strings.Contains(a.raw, `aws_eventbridge\" is not one this deployment delivers to: http, polling"`) {
		t.Fatalf("%d %s", a.status, a.raw)
	}
}
