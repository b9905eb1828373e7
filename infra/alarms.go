package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/obs"
)

// alarmSpec is one alarm. Description says what fired and what the on-call
// engineer should do ("To do: ..."); every alarm links docs/deploy.md#alarms.
type alarmSpec struct {
	ID          string
	Description string
	Metric      awscloudwatch.IMetric
	Op          awscloudwatch.ComparisonOperator
	Threshold   float64
	// MissingBreaching: no data means trouble (a heartbeat that stopped).
	// Otherwise missing data is OK (most metrics are only sent when nonzero).
	MissingBreaching bool
}

// addAlarm creates the alarm GifqWebhooks-<stage>-<ID>, wired to every
// alarm destination (alarmEmail's topic, alarmTopicArn).
func (s *Stack) addAlarm(a alarmSpec) awscloudwatch.Alarm {
	missing := awscloudwatch.TreatMissingData_NOT_BREACHING
	if a.MissingBreaching {
		missing = awscloudwatch.TreatMissingData_BREACHING
	}
	alarm := awscloudwatch.NewAlarm(s.Stack, jsii.String(a.ID+"Alarm"), &awscloudwatch.AlarmProps{
		AlarmName:          jsii.String(*s.StackName() + "-" + a.ID),
		AlarmDescription:   jsii.String(a.Description + " See docs/deploy.md#alarms."),
		Metric:             a.Metric,
		ComparisonOperator: a.Op,
		Threshold:          jsii.Number(a.Threshold),
		EvaluationPeriods:  jsii.Number(1),
		TreatMissingData:   missing,
	})
	for _, action := range s.alarmActions {
		alarm.AddAlarmAction(action)
		alarm.AddOkAction(action)
	}
	s.Alarms[a.ID] = alarm
	return alarm
}

// The operations alarms: the sweeper function (both modes), redrive, the
// EventBridge schedules and Lambda's recursive loop detection.
const (
	AlarmSweeperErrors       = "SweeperErrors"
	AlarmSweeperHeartbeat    = "SweeperHeartbeat"
	AlarmSchedulerHeartbeat  = "SchedulerHeartbeat"
	AlarmSweepRuleFailed     = "SweepScheduleFailedInvocations"
	AlarmScheduleRuleFailed  = "SchedulerScheduleFailedInvocations"
	AlarmScheduleDLQNotEmpty = "ScheduleDlqNotEmpty"
	AlarmRedriveErrors       = "RedriveErrors"
	AlarmStatsErrors         = "StatsErrors"
	AlarmRecursionDropped    = "RecursiveInvocationsDropped"
	AlarmOldestOverdue       = "OldestOverdueDelivery"
)

// OperationsAlarms in dashboard order.
var OperationsAlarms = []string{
	AlarmSweeperErrors, AlarmSweeperHeartbeat, AlarmSchedulerHeartbeat, AlarmSweepRuleFailed,
	AlarmScheduleRuleFailed, AlarmScheduleDLQNotEmpty, AlarmRedriveErrors, AlarmStatsErrors, AlarmRecursionDropped, AlarmOldestOverdue,
}

// OldestOverdueMinutes is how long past its due time a delivery the sweep
// finds may be before OldestOverdueDelivery fires: well past a lost
// message's grace and re-queue (under 20 minutes), within the contract's
// ~90 minutes of retries.
const OldestOverdueMinutes = 60

// Heartbeat windows: each holds about two runs, so one late or failed run
// does not page, two in a row do. CloudWatch's periods are aligned to the
// clock and EventBridge's rates are not, so a window of exactly one run
// could hold none by chance.
const (
	SweeperHeartbeatMinutes   = 2 * SweepRate // 30: two sweeps
	SchedulerHeartbeatMinutes = 5             // five scheduler runs
)

// heartbeatMetric is the sum of a heartbeat over its window (no label: a
// labelled metric renders as a metric math query, not a plain alarm metric).
func (s *Stack) heartbeatMetric(name string, minutes float64) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(MetricsNamespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{obs.DimensionStage: jsii.String(s.Config.Stage)},
		Statistic:     jsii.String("Sum"),
		Period:        awscdk.Duration_Minutes(jsii.Number(minutes)),
	})
}

func (s *Stack) addOperationsAlarms() {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	sum5 := &awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}
	ge := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	lt := awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD
	sweeper, redrive := s.Functions[FnSweeper], s.Functions[FnRedrive]

	s.addAlarm(alarmSpec{ID: AlarmSweeperErrors, Metric: sweeper.MetricErrors(sum5), Op: ge, Threshold: 1,
		Description: "The sweeper function failed a run (the 15-minute sweep or the every-minute scheduler of parked " +
			"deliveries): stuck deliveries are not re-queued, or parked retries (attempts 6-8, long Retry-After, far rate " +
			"slots) are not sent. To do: read the sweeper log group ('sweep finished' / 'schedule run finished' and the " +
			"error); check DynamoDB throttling and the function's permissions; roll back a bad deploy. The next run " +
			"picks up what this one missed."})
	s.addAlarm(alarmSpec{ID: AlarmSweeperHeartbeat, Op: lt, Threshold: 1, MissingBreaching: true,
		Metric: s.heartbeatMetric(obs.MetricSweeperRuns, SweeperHeartbeatMinutes),
		Description: fmt.Sprintf("No sweep finished without error in %d minutes (it runs every %d): deliveries whose "+
			"message was lost stay stuck. To do: check the SweepSchedule rule is ENABLED, SweeperErrors, the "+
			"SweepScheduleFailedInvocations alarm and the schedule target DLQ, and the sweeper log group. Invoke the "+
			"sweeper by hand with events/sweeper.json to catch up.", SweeperHeartbeatMinutes, SweepRate)})
	s.addAlarm(alarmSpec{ID: AlarmSchedulerHeartbeat, Op: lt, Threshold: 1, MissingBreaching: true,
		Metric: s.heartbeatMetric(obs.MetricSchedulerRuns, SchedulerHeartbeatMinutes),
		Description: fmt.Sprintf("No scheduler run finished without error in %d minutes (it runs every minute): "+
			"parked deliveries (retries past 15 minutes, long Retry-After and rate waits) are not being sent, and no "+
			"other alarm sees it. To do: check the SchedulerSchedule rule is ENABLED, SweeperErrors, "+
			"SchedulerScheduleFailedInvocations and the schedule target DLQ, and the sweeper log group; invoke the "+
			"sweeper with events/scheduler.json to send what is due.", SchedulerHeartbeatMinutes)})
	for _, r := range []struct {
		id, rule string
		name     *string
	}{
		{AlarmSweepRuleFailed, "SweepSchedule", s.SweepRule.RuleName()},
		{AlarmScheduleRuleFailed, "SchedulerSchedule", s.ScheduleRule.RuleName()},
	} {
		s.addAlarm(alarmSpec{ID: r.id, Op: ge, Threshold: 1,
			Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace: jsii.String("AWS/Events"), MetricName: jsii.String("FailedInvocations"),
				DimensionsMap: &map[string]*string{"RuleName": r.name}, Statistic: jsii.String("Sum"), Period: five,
			}),
			Description: fmt.Sprintf("EventBridge could not invoke the sweeper function from the %s rule after its "+
				"retries (throttled, deleted, or its resource policy lost). To do: check Lambda throttles and the "+
				"function's resource policy (a redeploy restores it); the failed events are in the schedule target DLQ "+
				"(ScheduleDlqNotEmpty), and the heartbeat alarms show whether runs resumed.", r.rule)})
	}
	s.addAlarm(alarmSpec{ID: AlarmScheduleDLQNotEmpty, Op: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, Threshold: 0,
		Metric: s.ScheduleDLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}),
		Description: "Sweeper or scheduler runs were lost: EventBridge could not invoke the function, or a run still " +
			"failed after Lambda's two asynchronous retries. Nothing needs replaying (every run does the whole job " +
			"again), but runs were missed. To do: read one message's attributes for the cause (ERROR_CODE/ERROR_MESSAGE " +
			"from EventBridge, ErrorCode/ErrorMessage from Lambda), fix it, then purge the queue."})
	s.addAlarm(alarmSpec{ID: AlarmOldestOverdue, Op: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		Threshold: OldestOverdueMinutes * 60 * 1000,
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(MetricsNamespace), MetricName: jsii.String(obs.MetricSweeperOldestOverdue),
			DimensionsMap: &map[string]*string{obs.DimensionStage: jsii.String(s.Config.Stage)},
			Statistic:     jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(SweeperHeartbeatMinutes)),
		}),
		Description: fmt.Sprintf("A sweep found a delivery more than %d minutes past its due time (metric %s, ms): a "+
			"message re-queued each sweep and still not attempted, so deliveries are late or being lost. To do: read the "+
			"sweeper log ('sweep finished': requeued, waiting, oldest_overdue_seconds; 'stuck delivery re-queued' names "+
			"the delivery ids), then that delivery's attempts; check the deliver function's errors and throttles and the "+
			"lanes' QueueAge alarms (consumers behind), and DynamoDB throttling.", OldestOverdueMinutes, obs.MetricSweeperOldestOverdue)})
	s.addAlarm(alarmSpec{ID: AlarmStatsErrors, Metric: s.Functions[FnStats].MetricErrors(sum5), Op: ge, Threshold: 1,
		Description: "The stats function failed a stream batch (a DynamoDB error or its timeout): the batch is retried, " +
			"halved, twice and then skipped, so the delivery stats may over- or under-count that hour; deliveries are " +
			"not affected. To do: read the stats log group ('stats write failed'), fix the cause (throttling: the table's " +
			"capacity); nothing to replay."})
	s.addAlarm(alarmSpec{ID: AlarmRedriveErrors, Metric: redrive.MetricErrors(sum5), Op: ge, Threshold: 1,
		Description: "A redrive run failed (an SQS or DynamoDB error, or it hit its timeout). Messages it had moved stay " +
			"moved; the others are back in the DLQ within 15 minutes. To do: read the redrive log group, fix the cause, " +
			"and run it again (it continues where it stopped)."})

	// Lambda stops a chain of invocations through the same queue after
	// about 16 hops and drops the message. deliver may loop by design and
	// has RecursiveLoop Allow; a nonzero count here means a function without
	// it is in a loop, or the setting was lost.
	using := map[string]awscloudwatch.IMetric{}
	for i, fn := range Functions {
		using[fmt.Sprintf("m%d", i)] = s.Functions[fn].Metric(jsii.String("RecursiveInvocationsDropped"), sum5)
	}
	s.addAlarm(alarmSpec{ID: AlarmRecursionDropped, Op: ge, Threshold: 1,
		Metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String("SUM(METRICS())"), UsingMetrics: &using, Period: five,
			Label: jsii.String("RecursiveInvocationsDropped, all functions"),
		}),
		Description: "Lambda's recursive loop detection stopped an invocation chain and dropped its message (it reached " +
			"the DLQ looking like poison). deliver is allowed to loop (its retries go back to its own queue); this means " +
			"another function loops, or deliver lost RecursiveLoop Allow. To do: check each function's recursive loop " +
			"setting in the Lambda console (deliver: Allow), redeploy, and redrive the poison messages."})
}
