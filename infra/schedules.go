package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// ScheduleDLQRetention: how long an EventBridge invocation that could not
// reach the sweeper stays in the target DLQ. Each one is only evidence (the
// next run does the same work), kept long enough for a weekend.
const ScheduleDLQRetention = 14 * 24 * 3600 // seconds

// addSchedules runs the sweeper function every SweepRate minutes (the sweep)
// and every minute in its schedule mode (the scheduler of parked
// deliveries). Both targets retry, and what EventBridge still cannot deliver
// (the function throttled, deleted, or its permission gone) goes to a DLQ of
// its own with an alarm, so a silent stop is seen. EventBridge invokes the
// function asynchronously, so the same queue is also the function's own
// DLQ (checkov CKV_AWS_116): a run that still fails after Lambda's two
// asynchronous retries lands there too.
func (s *Stack) addSchedules(name string, sweeper awslambda.Function, removal awscdk.RemovalPolicy) {
	// No fixed name: nothing refers to it by name, and a retained queue
	// with a fixed name would collide on a redeploy.
	s.ScheduleDLQ = awssqs.NewQueue(s.Stack, jsii.String("ScheduleTargetDLQ"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Seconds(jsii.Number(ScheduleDLQRetention)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RemovalPolicy:   removal,
	})
	cfn := sweeper.Node().DefaultChild().(awslambda.CfnFunction)
	cfn.SetDeadLetterConfig(&awslambda.CfnFunction_DeadLetterConfigProperty{TargetArn: s.ScheduleDLQ.QueueArn()})
	// Lambda sends to a function's DLQ with the function's role, and checks
	// the permission when the function is created (it depends on its role,
	// and so on this policy).
	sweeper.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sqs:SendMessage"),
		Resources: jsii.Strings(*s.ScheduleDLQ.QueueArn()),
	}))
	s.SweepRule = awsevents.NewRule(s.Stack, jsii.String("SweepSchedule"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("Runs the %s sweeper every %d minutes", name, SweepRate)),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(SweepRate))),
	})
	s.SweepRule.AddTarget(awseventstargets.NewLambdaFunction(sweeper, &awseventstargets.LambdaFunctionProps{
		RetryAttempts:   jsii.Number(2),
		MaxEventAge:     awscdk.Duration_Minutes(jsii.Number(10)),
		DeadLetterQueue: s.ScheduleDLQ,
	}))
	// The same function every minute in its schedule mode (design BC,
	// docs/scale.md): no new permissions, it queries the park index and
	// sends to the delivery queue, which the grants already allow.
	s.ScheduleRule = awsevents.NewRule(s.Stack, jsii.String("SchedulerSchedule"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("Runs the %s scheduler of parked deliveries every minute", name)),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(ScheduleRate))),
	})
	s.ScheduleRule.AddTarget(awseventstargets.NewLambdaFunction(sweeper, &awseventstargets.LambdaFunctionProps{
		Event:           awsevents.RuleTargetInput_FromObject(ScheduleInput),
		RetryAttempts:   jsii.Number(1),
		MaxEventAge:     awscdk.Duration_Minutes(jsii.Number(1)), // the next minute's run does the same
		DeadLetterQueue: s.ScheduleDLQ,
	}))
}
