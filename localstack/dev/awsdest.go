//go:build awsdest

package main

import (
	"context"
	"fmt"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/destination/providers"
)

// useLocalStackDestinations delivers AWS endpoints (aws_sqs, aws_sns,
// aws_eventbridge) to the LocalStack at endpoint, when it is set
// (localstack/host.sh up): its STS, SQS, SNS and EventBridge stand in for
// customers' accounts, in us-east-1 unless DESTINATION_REGIONS says more.
// Without it, make dev answers an AWS endpoint's registration 422. Built
// only with the tag awsdest (make dev DEV_TAGS=awsdest, make
// portal-test-aws): the SDK's config loader and the SNS and EventBridge
// clients are a tenth of a cold build (docs/local.md).
func useLocalStackDestinations(ctx context.Context, a *app.App, endpoint string) error {
	if endpoint == "" {
		return nil
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"), awsconfig.WithBaseEndpoint(endpoint),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		return fmt.Errorf("LocalStack for AWS destinations: %w", err)
	}
	if len(a.Config.DestinationRegions) == 0 {
		a.Config.DestinationRegions = []string{"us-east-1"}
	}
	providers.UseAWS(a.Destinations, cfg, a.Config.DestinationRegions, a.Config.DeploymentAccount, a.Config.DeliveryTimeout)
	return nil
}
