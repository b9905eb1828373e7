package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// ExternalIDPattern is what every account's sts:ExternalId looks like
// (domain.NewExternalID): "gifq-" and 32 hex digits.
const ExternalIDPattern = "gifq-*"

// customerRoleFunctions assume customers' roles: the api once when an AWS
// endpoint is registered or changed (the check), deliver for every attempt
// (credentials cached per role).
var customerRoleFunctions = []string{FnAPI, FnDeliver}

// addCustomerRoleAccess lets those functions call sts:AssumeRole on
// another account's role: which roles is the customers' choice, and each
// role's trust policy (Principal: our account, Condition: the account's
// sts:ExternalId) decides whether we get in. The ExternalId condition only
// refuses a call without one of our form, and the code always sends one;
// so every role of the deployment's own account is denied outright: a role
// there that trusts the account (its root, as many do) would otherwise be
// reachable through any tenant's AWS endpoint. The deny names the roles by
// ARN (sts:AssumeRole's resource is the role), so it holds whatever
// condition keys the request carries, and an explicit deny beats any allow
// added later. The code refuses such a role at registration too
// (DEPLOYMENT_ACCOUNT_ID, awsdest.AWS.OwnAccount). docs/destinations.md.
func (s *Stack) addCustomerRoleAccess() {
	allow := awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("AssumeCustomerDestinationRoles"),
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings("arn:" + *awscdk.Aws_PARTITION() + ":iam::*:role/*"),
		Conditions: &map[string]any{
			"StringLike": map[string]any{"sts:ExternalId": ExternalIDPattern},
		},
	})
	deny := awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("NoRoleOfTheDeploymentsOwnAccount"),
		Effect:    awsiam.Effect_DENY,
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings(ownAccountRoles()),
	})
	for _, fn := range customerRoleFunctions {
		s.Functions[fn].AddToRolePolicy(allow)
		s.Functions[fn].AddToRolePolicy(deny)
		s.Functions[fn].AddEnvironment(jsii.String("DEPLOYMENT_ACCOUNT_ID"), awscdk.Aws_ACCOUNT_ID(), nil)
	}
}

// ownAccountRoles is every role of the deployment's account, paths included.
func ownAccountRoles() string {
	return "arn:" + *awscdk.Aws_PARTITION() + ":iam::" + *awscdk.Aws_ACCOUNT_ID() + ":role/*"
}
