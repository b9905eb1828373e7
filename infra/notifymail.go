package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// noticeMailers are the functions that publish notices (package notify:
// the worker states an endpoint failing, disabled or recovered).
var noticeMailers = []string{FnDeliver}

// addNoticeMail lets the notice publishers mail from notifyEmailFrom:
// ses:SendEmail on that address's identity and its domain's (SES checks
// the one that is verified), only with that From address, and names it to
// them as NOTIFY_EMAIL_FROM. Nothing without the option.
func (s *Stack) addNoticeMail() {
	from := s.Config.NotifyEmailFrom
	if from == "" {
		return
	}
	st := awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("SendNoticeMail"),
		Actions:   jsii.Strings("ses:SendEmail"),
		Resources: jsii.Strings(sesIdentityARNs(from)...),
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"ses:FromAddress": from},
		},
	})
	for _, fn := range noticeMailers {
		s.Functions[fn].AddToRolePolicy(st)
		s.Functions[fn].AddEnvironment(jsii.String("NOTIFY_EMAIL_FROM"), jsii.String(from), nil)
	}
}

// sesIdentityARNs are the SES identities that may send as from, in the
// stack's account and region: the address and its domain.
func sesIdentityARNs(from string) []string {
	prefix := "arn:" + *awscdk.Aws_PARTITION() + ":ses:" + *awscdk.Aws_REGION() + ":" + *awscdk.Aws_ACCOUNT_ID() + ":identity/"
	return []string{prefix + from, prefix + from[strings.LastIndexByte(from, '@')+1:]}
}

// addNoticeLinks names the portal to the notice publishers (PORTAL_URL), so a
// notice and its mail link to the endpoint's page: the configured portalUrl,
// or the API's own /portal/, the address the api function works out of each
// request when none is configured.
func (s *Stack) addNoticeLinks() {
	url := s.Config.PortalURL
	if url == "" {
		url = *awscdk.Fn_Join(jsii.String(""), &[]*string{s.APIURL, jsii.String("portal/")})
	}
	for _, fn := range noticeMailers {
		s.Functions[fn].AddEnvironment(jsii.String("PORTAL_URL"), jsii.String(url), nil)
	}
}
