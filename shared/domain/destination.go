package domain

import (
	"crypto/rand"
	"encoding/hex"
)

// DestinationType is how an endpoint is reached.
type DestinationType string

// The destination types (docs/destinations.md).
const (
	DestinationHTTP        DestinationType = "http" // a POST to the endpoint's URL (the default)
	DestinationSQS         DestinationType = "aws_sqs"
	DestinationSNS         DestinationType = "aws_sns"
	DestinationEventBridge DestinationType = "aws_eventbridge"
	// DestinationPolling is read instead of pushed (package poll): no
	// delivery, message or attempt is made for it.
	DestinationPolling DestinationType = "polling"
)

// Destination is where an AWS endpoint delivers: a customer's queue, topic
// or event bus, written to as the customer's role.
type Destination struct {
	Type      DestinationType `dynamodbav:"type"`
	TargetARN string          `dynamodbav:"target_arn"`
	RoleARN   string          `dynamodbav:"role_arn"`
	// ExternalID is the account's (Account.AWSExternalID), copied here
	// when the destination is set, so the worker needs only the endpoint.
	ExternalID string `dynamodbav:"external_id"`
}

// DestinationOf is ep's destination type: DestinationHTTP without one.
func (e *Endpoint) DestinationOf() DestinationType {
	if e.Destination == nil || e.Destination.Type == "" {
		return DestinationHTTP
	}
	return e.Destination.Type
}

// NewExternalID makes an account's sts:ExternalId: 128 random bits, so no
// other customer can guess it and name it in a role of theirs (docs/destinations.md).
func NewExternalID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "gifq-" + hex.EncodeToString(b[:])
}
