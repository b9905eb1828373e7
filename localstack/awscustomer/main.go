// Command awscustomer plays a customer's AWS account on LocalStack for the
// portal's AWS endpoint test (localstack/_browser/portal-aws.test.mjs): it
// makes an SQS queue and prints {"queue_arn", "queue_url", "role_arn"} as
// JSON; with -receive URL it waits up to a minute for one message on that
// queue and prints its body. LOCALSTACK_ENDPOINT says where LocalStack is.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

func main() {
	receive := flag.String("receive", "", "a queue URL: wait for one message and print its body")
	flag.Parse()
	if err := run(*receive); err != nil {
		fmt.Fprintln(os.Stderr, "awscustomer:", err)
		os.Exit(1)
	}
}

func run(receive string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep := os.Getenv("LOCALSTACK_ENDPOINT")
	if ep == "" {
		return fmt.Errorf("LOCALSTACK_ENDPOINT is not set (localstack/host.sh up)")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"), awsconfig.WithBaseEndpoint(ep),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		return err
	}
	q := sqs.NewFromConfig(cfg)
	if receive != "" {
		for ctx.Err() == nil {
			out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(receive), WaitTimeSeconds: 5, MaxNumberOfMessages: 1})
			if err != nil {
				return err
			}
			if len(out.Messages) > 0 {
				fmt.Print(aws.ToString(out.Messages[0].Body))
				return nil
			}
		}
		return fmt.Errorf("no message on %s", receive)
	}
	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return err
	}
	made, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("gifq-portal-%d", time.Now().UnixNano()))})
	if err != nil {
		return err
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: made.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]string{
		"queue_arn": attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], "queue_url": aws.ToString(made.QueueUrl),
		// LocalStack does not enforce IAM: any role of the account is assumed (docs/destinations.md has the real policies).
		"role_arn": fmt.Sprintf("arn:aws:iam::%s:role/gifq-portal-customer", aws.ToString(id.Account)),
	})
}
