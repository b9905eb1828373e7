// Package providers lists the destination types a deployment delivers to,
// one line per provider: a new destination type is its own package and its
// line here (and, for an AWS one, the row of its action in
// docs/destinations.md; our functions only assume the customer's role).
package providers

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/awsdest"
	"github.com/gifq/webhooks/shared/destination/awskinesis"
)

// AWS are the types reached through the customer's role.
var AWS = awsdest.Services{
	awsdest.SQS,
	awsdest.SNS,
	awsdest.EventBridge,
	awskinesis.Stream,
}

// UseAWS makes r deliver to every AWS type, assuming the customers' roles
// with base's credentials, to targets in regions and roles outside
// ownAccount (the deployment's; "" refuses none), each attempt bounded by
// timeout unless its request says otherwise.
func UseAWS(r *destination.Router, base aws.Config, regions []string, ownAccount string, timeout time.Duration) {
	awsdest.Use(r, base, regions, ownAccount, timeout, AWS...)
}
