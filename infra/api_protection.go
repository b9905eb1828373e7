package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/jsii-runtime-go"
)

// ExecutionLogGroupName is the log group API Gateway writes a stage's
// execution logs to. It is fixed by API Gateway; if the group does not
// exist, API Gateway creates it itself, outside the stack and kept forever.
func ExecutionLogGroupName(restAPIID, stage string) string {
	return "API-Gateway-Execution-Logs_" + restAPIID + "/" + stage
}

// WAFRateWindow is the rate-based rule's evaluation window (seconds).
const WAFRateWindow = 300

// addAPIProtection adds what guards the API stage besides its throttle and
// the per-key limits: the execution log group, made by the stack with the
// same retention as the other logs, before the stage can write to it; and,
// with context waf=true, an AWS WAF web ACL whose rate-based rule answers
// 429 to one IP address sending more than wafRateLimit requests in 5
// minutes, before API Gateway or Lambda are paid for them.
func (s *Stack) addAPIProtection(name string, removal awscdk.RemovalPolicy) {
	if s.Api == nil {
		return // an HTTP API: no execution logs, and WAF is refused for it (Config.Validate)
	}
	stage := s.Api.DeploymentStage()
	s.ExecutionLogs = awslogs.NewLogGroup(s.Stack, jsii.String("ApiExecutionLogs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String(ExecutionLogGroupName(*s.Api.RestApiId(), s.Config.Stage)),
		Retention:     LogRetention,
		RemovalPolicy: removal,
	})
	stage.Node().AddDependency(s.ExecutionLogs)

	if !s.Config.WAF {
		return
	}
	visibility := func(metric string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true),
			MetricName:               jsii.String(metric),
			SampledRequestsEnabled:   jsii.Bool(true),
		}
	}
	body := fmt.Sprintf(`{"error":{"code":"rate_limited","message":"more than %d requests from this address in 5 minutes; slow down"}}`, s.Config.WAFRateLimit)
	s.WebACL = awswafv2.NewCfnWebACL(s.Stack, jsii.String("ApiWebAcl"), &awswafv2.CfnWebACLProps{
		Name:             jsii.String(name + "-api"),
		Description:      jsii.String("Rate limit per IP address in front of the " + name + " API"),
		Scope:            jsii.String("REGIONAL"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: &awswafv2.CfnWebACL_AllowActionProperty{}},
		VisibilityConfig: visibility(name + "-api"),
		CustomResponseBodies: &map[string]*awswafv2.CfnWebACL_CustomResponseBodyProperty{
			"RateLimited": {ContentType: jsii.String("APPLICATION_JSON"), Content: jsii.String(body)},
		},
		Rules: &[]*awswafv2.CfnWebACL_RuleProperty{{
			Name:     jsii.String("RatePerIP"),
			Priority: jsii.Number(0),
			Statement: &awswafv2.CfnWebACL_StatementProperty{
				RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
					AggregateKeyType:    jsii.String("IP"),
					Limit:               jsii.Number(float64(s.Config.WAFRateLimit)),
					EvaluationWindowSec: jsii.Number(WAFRateWindow),
				},
			},
			Action: &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{
				CustomResponse: &awswafv2.CfnWebACL_CustomResponseProperty{
					ResponseCode:          jsii.Number(429),
					CustomResponseBodyKey: jsii.String("RateLimited"),
				},
			}},
			VisibilityConfig: visibility(name + "-api-rate-per-ip"),
		}},
	})
	awswafv2.NewCfnWebACLAssociation(s.Stack, jsii.String("ApiWebAclAssociation"), &awswafv2.CfnWebACLAssociationProps{
		ResourceArn: stage.StageArn(),
		WebAclArn:   s.WebACL.AttrArn(),
	})
}
