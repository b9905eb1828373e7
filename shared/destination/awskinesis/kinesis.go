// Package awskinesis is the Amazon Kinesis Data Streams destination: one
// PutRecord per attempt into the customer's stream, as their role (the
// awsdest provider assumes it). A record has no attributes, so its data is
// the webhook's ids beside the body (awsdest.Detail), and its partition key
// is the event's ordering key if it has one, else its id.
package awskinesis

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/awsdest"
)

// Type is the destination type.
const Type = "aws_kinesis"

// MaxPartitionKey is Kinesis's bound on a partition key (Unicode characters).
const MaxPartitionKey = 256

var streamRE = regexp.MustCompile(`^stream/[A-Za-z0-9_.-]{1,128}$`)

// Stream is the service (registered in shared/destination/providers).
var Stream = awsdest.Service{
	Schema:     awsdest.Schema(Type, "Amazon Kinesis data stream", "arn:aws:kinesis:eu-west-1:123456789012:stream/payouts"),
	ARNService: "kinesis",
	Resource: func(t *awsdest.Target) error {
		if !streamRE.MatchString(t.ARN.Resource) {
			return errors.New("not a stream (the resource is stream/<name>, 1 to 128 letters, digits, _ . and -)")
		}
		return nil
	},
	Put: putRecord,
	// Codes only Kinesis answers; the rest are awsdest's.
	Codes: map[string]string{
		"provisionedthroughputexceededexception": awsdest.ErrThrottled,
		"resourceinuseexception":                 awsdest.ErrUnavailable, // the stream is being created or updated
	},
}

// PartitionKey is r's record's partition key: the event's ordering key if
// it has one (cut to Kinesis's 256 characters), else its id.
func PartitionKey(r destination.Request) string {
	k := r.OrderingKey
	if k == "" {
		k = r.EventID
	}
	if rs := []rune(k); len(rs) > MaxPartitionKey {
		k = string(rs[:MaxPartitionKey])
	}
	return k
}

func putRecord(ctx context.Context, cfg aws.Config, t awsdest.Target, r destination.Request) (string, error) {
	data, err := json.Marshal(awsdest.DetailOf(r))
	if err != nil {
		return "", &smithy.GenericAPIError{Code: "MalformedDetail", Message: "the event body is not JSON"}
	}
	out, err := kinesis.NewFromConfig(cfg).PutRecord(ctx, &kinesis.PutRecordInput{
		StreamARN: aws.String(t.ARN.String()), Data: data, PartitionKey: aws.String(PartitionKey(r)),
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace("SequenceNumber " + aws.ToString(out.SequenceNumber) + " " + aws.ToString(out.ShardId)), nil
}
