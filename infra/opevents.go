package main

import (
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/jsii-runtime-go"
)

// opsEventPublishers are the functions that publish operational events
// (package opevents, docs/operational-events.md): the api (secret rotated,
// endpoint disabled by its owner), deliver (dead-lettered, breaker opened
// and closed, endpoint disabled by a 410 or by failing too long) and the
// sweeper (the dead letters it sends). redrive states no such fact.
var opsEventPublishers = []string{FnAPI, FnDeliver, FnSweeper}

// addOpsEventBus makes the stack's own EventBridge bus for operational
// events, lets the publishing functions put events on it (events:PutEvents
// on this bus only) and names it to them as OPS_EVENT_BUS. Customers' and
// operators' rules on it route the facts to their alerts. It holds no data
// of its own, so it goes with the stack on every stage.
func (s *Stack) addOpsEventBus(name string) {
	s.OpsEventBus = awsevents.NewEventBus(s.Stack, jsii.String("OpsEventBus"), &awsevents.EventBusProps{
		EventBusName: jsii.String(name + "-ops"),
		Description:  jsii.String("Operational events of " + name + ": endpoint disabled, delivery dead-lettered, breaker opened/closed, secret rotated"),
	})
	fns := append([]string{}, opsEventPublishers...)
	sort.Strings(fns)
	for _, fn := range fns {
		s.OpsEventBus.GrantPutEventsTo(s.Functions[fn], nil)
		s.Functions[fn].AddEnvironment(jsii.String("OPS_EVENT_BUS"), s.OpsEventBus.EventBusName(), nil)
	}
}
