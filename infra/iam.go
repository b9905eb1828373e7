package main

import (
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/schema"
)

// tableAccess is what one function may do on the table: item actions on
// the table itself, and Query on the named indexes only.
type tableAccess struct {
	Actions []string // dynamodb:<Action> on the table
	Indexes []string // schema index names it queries
}

// tableGrants are each function's DynamoDB actions, read from the code
// (infra/iam_reach_test.go derives them from each function's calls and fails
// when this table and the code part). A transaction needs the item action of
// each of its parts (there is no TransactWriteItems action); no function
// scans, reads streams or describes the table.
var tableGrants = map[string]tableAccess{
	// Management and ingest: keys, endpoints, event types, events and
	// deliveries; the endpoint log and failed-deliveries indexes, and the
	// account's events by day (replay).
	FnAPI: {
		Actions: []string{"BatchGetItem", "BatchWriteItem", "DeleteItem", "GetItem", "PutItem", "Query", "UpdateItem"},
		Indexes: []string{schema.IndexEndpointLog, schema.IndexEndpointStatus, schema.IndexAccountEvents},
	},
	// Claims, attempts and outcomes (transactions of puts, updates and
	// deletes); and the account notifications it ingests as system events
	// (shared/notify through ingest: the account's partition and its
	// events by day, the deliveries' batch write).
	FnDeliver: {
		Actions: []string{"BatchGetItem", "BatchWriteItem", "DeleteItem", "GetItem", "PutItem", "Query", "UpdateItem"},
		Indexes: []string{schema.IndexAccountEvents},
	},
	// The sweep and park indexes, the deliveries an index window holds,
	// its marks, and the writes that re-queue or fail.
	FnSweeper: {
		Actions: []string{"BatchGetItem", "GetItem", "PutItem", "Query", "UpdateItem"},
		Indexes: []string{schema.IndexPark, schema.IndexSweep},
	},
	// An account (a conditional put) and its key (a transaction: the
	// account's existence checked, the key's two items put).
	FnOps: {Actions: []string{"ConditionCheckItem", "PutItem"}},
	// Adds to the hourly counter items (the stream read is the event
	// source's own grant).
	FnStats: {Actions: []string{"UpdateItem"}},
	// Reads and resets the deliveries it moves back.
	FnRedrive: {Actions: []string{"GetItem", "UpdateItem"}},
}

// grantTable gives each function its tableGrants: one statement on the
// table, and one for Query on its indexes.
func (s *Stack) grantTable() {
	fns := make([]string, 0, len(tableGrants))
	for fn := range tableGrants {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	for _, fn := range fns {
		g := tableGrants[fn]
		actions := make([]string, len(g.Actions))
		for i, a := range g.Actions {
			actions[i] = "dynamodb:" + a
		}
		s.Roles[fn].AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(actions...), Resources: jsii.Strings(*s.Table.TableArn()),
		}))
		if len(g.Indexes) == 0 {
			continue
		}
		ixs := make([]string, len(g.Indexes))
		for i, ix := range g.Indexes {
			ixs[i] = *s.Table.TableArn() + "/index/" + ix
		}
		s.Roles[fn].AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("dynamodb:Query"), Resources: jsii.Strings(ixs...),
		}))
	}
}
