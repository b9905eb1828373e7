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

// addCustomerRoleAccess lets those functions call sts:AssumeRole on any
// account's role: which roles is the customers' choice, and each role's
// trust policy (Principal: our account, Condition: the account's
// sts:ExternalId) decides whether we get in. The condition here is ours: a
// call that passes no ExternalId, or one not of our form, is refused by our
// own policy, so a role of our own account that trusts the account cannot
// be assumed through this path. docs/destinations.md.
func (s *Stack) addCustomerRoleAccess() {
	st := awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("AssumeCustomerDestinationRoles"),
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings("arn:" + *awscdk.Aws_PARTITION() + ":iam::*:role/*"),
		Conditions: &map[string]any{
			"StringLike": map[string]any{"sts:ExternalId": ExternalIDPattern},
		},
	})
	for _, fn := range customerRoleFunctions {
		s.Functions[fn].AddToRolePolicy(st)
	}
}
