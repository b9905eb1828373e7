package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/obs"
)

// appMetric is one of the functions' EMF metrics (shared/obs), in the
// MetricsNamespace with the Stage dimension.
func (s *Stack) appMetric(name, statistic string) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(MetricsNamespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{obs.DimensionStage: jsii.String(s.Config.Stage)},
		Statistic:     jsii.String(statistic),
		Period:        awscdk.Duration_Minutes(jsii.Number(5)),
		Label:         jsii.String(name),
	})
}

// DashboardAppMetrics is every EMF metric the dashboard shows.
var DashboardAppMetrics = []string{
	obs.MetricEventsIngested, obs.MetricDeliveriesCreated, obs.MetricAttempts, obs.MetricDelivered,
	obs.MetricAttemptsFailed, obs.MetricDeadLettered, obs.MetricRateLimitDeferrals, obs.MetricEndpointDeferrals,
	obs.MetricSlotHandoffs, obs.MetricSlowLaneMoves, obs.MetricAttemptDuration, obs.MetricTimeToDeliver, obs.MetricSweeperRequeued, obs.MetricSweeperDeadLettered,
	obs.MetricRedriveMoved, obs.MetricEnqueueFailures, obs.MetricOpEventsFailed, obs.MetricSweeperRuns, obs.MetricSchedulerRuns, obs.MetricOrderedHolds,
}

func (s *Stack) addDashboard(name string) {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	opts := func(stat string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String(stat)}
	}
	labelled := func(stat, label string) *awscloudwatch.MetricOptions {
		o := opts(stat)
		o.Label = jsii.String(label)
		return o
	}
	graph := func(title string, width float64, left, right []awscloudwatch.IMetric) awscloudwatch.GraphWidget {
		p := &awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6), Left: &left}
		if len(right) > 0 {
			p.Right = &right
		}
		return awscloudwatch.NewGraphWidget(p)
	}
	deliver, api := s.Functions[FnDeliver], s.Functions[FnAPI]
	counts := func(names ...string) []awscloudwatch.IMetric {
		var m []awscloudwatch.IMetric
		for _, n := range names {
			m = append(m, s.appMetric(n, "Sum"))
		}
		return m
	}
	percentiles := func(names ...string) []awscloudwatch.IMetric {
		var m []awscloudwatch.IMetric
		for _, n := range names {
			for _, p := range []string{"p50", "p99"} {
				x := s.appMetric(n, p).With(&awscloudwatch.MetricOptions{Label: jsii.String(n + " " + p)})
				m = append(m, x)
			}
		}
		return m
	}
	var alarms []interfacesawscloudwatch.IAlarmRef
	for _, id := range AlarmOrder {
		alarms = append(alarms, s.Alarms[id])
	}

	s.Dashboard = awscloudwatch.NewDashboard(s.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   jsii.String(name),
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	s.Dashboard.AddWidgets(awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
		Title: jsii.String("Alarms"), Alarms: &alarms, Width: jsii.Number(24), Height: jsii.Number(3),
	}))
	s.Dashboard.AddWidgets(
		graph("Delivery queue depth (its slow lane: failing endpoints; its paced lane: accounts over their rate)", 8, []awscloudwatch.IMetric{
			s.Queue.MetricApproximateNumberOfMessagesVisible(labelled("Maximum", "visible")),
			s.Queue.MetricApproximateNumberOfMessagesNotVisible(labelled("Maximum", "in flight / waiting to retry")),
			s.SlowQueue.MetricApproximateNumberOfMessagesVisible(labelled("Maximum", "slow lane visible")),
			s.SlowQueue.MetricApproximateNumberOfMessagesNotVisible(labelled("Maximum", "slow lane in flight / waiting")),
			s.PacedQueue.MetricApproximateNumberOfMessagesVisible(labelled("Maximum", "paced lane visible")),
			s.PacedQueue.MetricApproximateNumberOfMessagesNotVisible(labelled("Maximum", "paced lane in flight / waiting")),
		}, []awscloudwatch.IMetric{
			s.Queue.MetricApproximateAgeOfOldestMessage(labelled("Maximum", "age of oldest (s)")),
			s.SlowQueue.MetricApproximateAgeOfOldestMessage(labelled("Maximum", "slow lane age of oldest (s)")),
			s.PacedQueue.MetricApproximateAgeOfOldestMessage(labelled("Maximum", "paced lane age of oldest (s)")),
		}),
		graph("DLQ depth", 8, []awscloudwatch.IMetric{
			s.DLQ.MetricApproximateNumberOfMessagesVisible(labelled("Maximum", "DLQ visible")),
		}, []awscloudwatch.IMetric{
			s.DLQ.MetricNumberOfMessagesSent(labelled("Sum", "sent to DLQ")),
		}),
		graph("Outcomes", 8, counts(obs.MetricDelivered, obs.MetricAttemptsFailed, obs.MetricDeadLettered), nil),
	)
	s.Dashboard.AddWidgets(
		graph("deliver: invocations, errors, throttles", 8, []awscloudwatch.IMetric{
			deliver.MetricInvocations(labelled("Sum", "invocations")),
			deliver.MetricErrors(labelled("Sum", "errors")),
			deliver.MetricThrottles(labelled("Sum", "throttles")),
		}, nil),
		graph("deliver: duration", 8, []awscloudwatch.IMetric{
			deliver.MetricDuration(labelled("p50", "p50")),
			deliver.MetricDuration(labelled("p99", "p99")),
			deliver.MetricDuration(labelled("Maximum", "max")),
		}, nil),
		graph("Attempt and end-to-end latency (ms)", 8, percentiles(obs.MetricAttemptDuration, obs.MetricTimeToDeliver), nil),
	)
	s.Dashboard.AddWidgets(
		graph("Ingest", 8, counts(obs.MetricEventsIngested, obs.MetricDeliveriesCreated, obs.MetricAttempts, obs.MetricEnqueueFailures, obs.MetricOpEventsFailed), nil),
		graph("Deferrals (no attempt used), ordered holds, slot handoffs, slow lane moves", 8, counts(obs.MetricRateLimitDeferrals, obs.MetricEndpointDeferrals, obs.MetricOrderedHolds, obs.MetricSlotHandoffs, obs.MetricSlowLaneMoves), nil),
		graph("Sweeper and redrive", 8, counts(obs.MetricSweeperRequeued, obs.MetricSweeperDeadLettered, obs.MetricRedriveMoved),
			counts(obs.MetricSweeperRuns, obs.MetricSchedulerRuns)), // heartbeats, right axis
	)
	s.Dashboard.AddWidgets(
		graph("API requests and errors", 12, []awscloudwatch.IMetric{
			s.APIMetrics.MetricCount(labelled("Sum", "requests")),
			s.APIMetrics.MetricClientError(labelled("Sum", "4XX")),
			s.APIMetrics.MetricServerError(labelled("Sum", "5XX")),
		}, []awscloudwatch.IMetric{
			api.MetricThrottles(labelled("Sum", "api function throttles")),
		}),
		graph("API latency (ms)", 12, []awscloudwatch.IMetric{
			s.APIMetrics.MetricLatency(labelled("p50", "p50")),
			s.APIMetrics.MetricLatency(labelled("p99", "p99")),
		}, nil),
	)
}
