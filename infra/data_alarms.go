package main

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/schema"
)

// The data alarms: DynamoDB throttling of the table and of its indexes,
// dead letters about to expire, and the ops function's failures.
const (
	AlarmTableThrottles = "TableThrottles"
	AlarmIndexThrottles = "IndexThrottles"
	AlarmDLQNearExpiry  = "DlqNearExpiry"
	AlarmOpsErrors      = "OpsErrors"
)

// DataAlarms in dashboard order.
var DataAlarms = []string{AlarmTableThrottles, AlarmIndexThrottles, AlarmDLQNearExpiry, AlarmOpsErrors}

// DLQExpiryWarning is how long before SQS deletes a dead letter (the DLQ's
// retention) its alarm fires: four days to find the cause and redrive.
const DLQExpiryWarning = 4 * 24 * time.Hour

// DLQNearExpirySeconds is that alarm's threshold on the oldest message's age.
var DLQNearExpirySeconds = (schema.Queues.DLQRetention - DLQExpiryWarning).Seconds()

// MaxAlarmMetrics is the most metrics CloudWatch takes in one alarm's
// metric math expression.
const MaxAlarmMetrics = 10

func (s *Stack) addDataAlarms() {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	ge := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	table := s.Table.TableName()
	throttles := func(index string) map[string]awscloudwatch.IMetric {
		dims := map[string]*string{"TableName": table}
		if index != "" {
			dims["GlobalSecondaryIndexName"] = jsii.String(index)
		}
		out := map[string]awscloudwatch.IMetric{}
		for _, m := range []string{"ReadThrottleEvents", "WriteThrottleEvents"} {
			out[m] = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String(m),
				DimensionsMap: &dims, Statistic: jsii.String("Sum"), Period: five,
			})
		}
		return out
	}
	sum := func(label string, using map[string]awscloudwatch.IMetric) awscloudwatch.IMetric {
		if len(using) > MaxAlarmMetrics {
			panic(fmt.Sprintf("%s: %d metrics in one alarm, CloudWatch takes %d: split it", label, len(using), MaxAlarmMetrics))
		}
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String("SUM(METRICS())"), UsingMetrics: &using, Period: five, Label: jsii.String(label),
		})
	}
	tableMetrics := map[string]awscloudwatch.IMetric{}
	for m, metric := range throttles("") {
		tableMetrics[map[string]string{"ReadThrottleEvents": "r", "WriteThrottleEvents": "w"}[m]] = metric
	}
	s.addAlarm(alarmSpec{ID: AlarmTableThrottles, Op: ge, Threshold: 1,
		Metric: sum("Table read and write throttle events", tableMetrics),
		Description: "DynamoDB throttled reads or writes of the table: a provisioned table past its capacity (auto " +
			"scaling lags by minutes), an on-demand table past twice its previous peak, or one hot partition (one " +
			"account's or endpoint's items). The SDK retries, so a few are invisible; lasting throttles mean ingest " +
			"500s (producers retry with their Idempotency-Key) and late deliveries. To do: on the table's Monitor tab " +
			"see which operation throttles and since when; raise tableMaxUnits or switch to on-demand; for a hot " +
			"partition, find the account (CloudWatch Contributor Insights on the table) and lower its rate."})
	indexMetrics := map[string]awscloudwatch.IMetric{}
	for i, ix := range schema.Table.Indexes {
		for m, metric := range throttles(ix.Name) {
			indexMetrics[fmt.Sprintf("i%d%s", i, map[string]string{"ReadThrottleEvents": "r", "WriteThrottleEvents": "w"}[m])] = metric
		}
	}
	s.addAlarm(alarmSpec{ID: AlarmIndexThrottles, Op: ge, Threshold: 1,
		Metric: sum("Index read and write throttle events", indexMetrics),
		Description: "DynamoDB throttled a global secondary index: an index's write throttling throttles the " +
			"table's writes too (every write that changes an indexed attribute waits for the index), and read " +
			"throttling slows the sweeper, the scheduler and the list views. To do: find the index (the table's " +
			"Monitor tab, by index); on provisioned capacity raise tableMaxUnits (each index scales on its own); " +
			"on demand it is a hot index partition: look for one key taking most writes."})
	s.addAlarm(alarmSpec{ID: AlarmDLQNearExpiry, Op: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, Threshold: DLQNearExpirySeconds,
		Metric: s.DLQ.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}),
		Description: fmt.Sprintf("A dead letter has waited %d days: SQS deletes it at %d (the DLQ's retention), and "+
			"with it the only handle on that delivery's redrive. To do: today, read its reason, fix the cause with "+
			"the receiver and redrive it (the redrive function, or the console to the DeliveryQueueArn); if it "+
			"should not be sent again, delete it on purpose.", int(DLQNearExpirySeconds/86400), int(schema.Queues.DLQRetention.Hours()/24))})
	s.addAlarm(alarmSpec{ID: AlarmOpsErrors, Op: ge, Threshold: 1,
		Metric: s.Functions[FnOps].MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}),
		Description: "The ops function failed a run (creating an account or a key): the operator who ran it saw the " +
			"error, but a script that runs it may not have. To do: read the ops log group for the error (an existing " +
			"account id, DynamoDB throttling, a bad event); run it again (an account that exists is refused, never " +
			"doubled)."})
}
