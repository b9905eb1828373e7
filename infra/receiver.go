package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// DemoReceiverConcurrency is the demo receiver's reserved concurrency: a
// few webhooks at once are all a demo gets (a 10 ms verification each, so
// hundreds a second), and a flood of its public URL stops there. Lambda
// keeps 100 of the account's concurrency unreserved, so the option needs an
// account quota of at least 105 (new accounts may start at 10).
const DemoReceiverConcurrency = 5

// addDemoReceiver deploys the demo receiver (context demoReceiver): a
// function URL that verifies each webhook's signature and logs it
// (shared/demoreceiver), so a team sees a first delivery minutes after
// deploying, without a server of its own. It reads the account's public
// keys from the API's JWKS route (public), so its role holds no data grant
// at all: its own logs and X-Ray. The URL takes POSTs from anyone (AuthType
// NONE: the webhook sender signs, it does not sign AWS requests), which is
// why prod refuses the option, and why it has a reserved concurrency of
// DemoReceiverConcurrency: a flood of requests to the public URL is
// throttled there (429) and can never take the account's concurrency from
// api and deliver.
func (s *Stack) addDemoReceiver(name, assetDir string, arch awslambda.Architecture, removal awscdk.RemovalPolicy) {
	env := map[string]string{"API_URL": *s.APIURL}
	s.Functions[FnReceiver], s.Roles[FnReceiver] = newFunction(s.Stack, name, FnReceiver, assetDir, arch, env, removal)
	s.Functions[FnReceiver].Node().DefaultChild().(awslambda.CfnFunction).SetReservedConcurrentExecutions(jsii.Number(DemoReceiverConcurrency))
	s.ReceiverURL = s.Functions[FnReceiver].AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType: awslambda.FunctionUrlAuthType_NONE,
	})
}
