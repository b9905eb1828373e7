package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
)

// apiMetrics are the API's CloudWatch metrics, whichever API fronts the
// api function: the alarms and the dashboard read them.
type apiMetrics interface {
	MetricCount(*awscloudwatch.MetricOptions) awscloudwatch.Metric
	MetricClientError(*awscloudwatch.MetricOptions) awscloudwatch.Metric
	MetricServerError(*awscloudwatch.MetricOptions) awscloudwatch.Metric
	MetricLatency(*awscloudwatch.MetricOptions) awscloudwatch.Metric
}

// HTTPStageName is the HTTP API's one stage: $default, so the URL has no
// stage segment and the function sees the paths a REST API gives it.
const HTTPStageName = "$default"

// httpAccessLogFormat is the HTTP API's access log line: the REST API's
// fields, never a header or a body (API keys, payloads).
const httpAccessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",` +
	`"requestTime":"$context.requestTime","httpMethod":"$context.httpMethod","path":"$context.path",` +
	`"status":"$context.status","protocol":"$context.protocol","responseLength":"$context.responseLength",` +
	`"integrationError":"$context.integrationErrorMessage"}`

// newHTTPAPI puts the api function behind an HTTP API (context api=http):
// one $default route, a Lambda proxy integration in payload format 1.0 (the
// REST API's event, which shared/httpapi reads either way), the stage's
// throttle and access logs as the REST API has them. What it does not
// have, by AWS's design: a WAF web ACL, X-Ray from the edge (traces start
// at the function) and execution logs (docs/deploy.md).
func newHTTPAPI(stack awscdk.Stack, name string, cfg Config, fn awslambda.Function, removal awscdk.RemovalPolicy) (awsapigatewayv2.HttpApi, awsapigatewayv2.HttpStage) {
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		// Under /aws/vendedlogs/: API Gateway's log delivery then needs no
		// entry in the account-wide log resource policy (5,120 characters,
		// which a generated name joins, and stage creation fails in a busy
		// account once it is full).
		LogGroupName:  jsii.String("/aws/vendedlogs/apigateway/" + name + "/access"),
		Retention:     LogRetention,
		RemovalPolicy: removal,
	})
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String(name),
		Description:        jsii.String("Webhook ingest and management API (" + cfg.Stage + ")"),
		CreateDefaultStage: jsii.Bool(false),
		DefaultIntegration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("ApiFunction"), fn,
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_1_0()}),
	})
	stage := api.AddStage(jsii.String("Stage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String(HTTPStageName),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(cfg.APIThrottleRate),
			BurstLimit: jsii.Number(float64(cfg.APIThrottleBurst)),
		},
	})
	stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(),
		Format:         jsii.String(httpAccessLogFormat),
	})
	return api, stage
}
