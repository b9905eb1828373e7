package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
)

// addDemoReceiver deploys the demo receiver (context demoReceiver): a
// function URL that verifies each webhook's signature and logs it
// (shared/demoreceiver), so a team sees a first delivery minutes after
// deploying, without a server of its own. It reads the account's public
// keys from the API's JWKS route (public), so its role holds no data grant
// at all: its own logs and X-Ray. The URL takes POSTs from anyone (AuthType
// NONE: the webhook sender signs, it does not sign AWS requests), which is
// why prod refuses the option.
func (s *Stack) addDemoReceiver(name, assetDir string, arch awslambda.Architecture, removal awscdk.RemovalPolicy) {
	env := map[string]string{"API_URL": *s.APIURL}
	s.Functions[FnReceiver], s.Roles[FnReceiver] = newFunction(s.Stack, name, FnReceiver, assetDir, arch, env, removal)
	s.ReceiverURL = s.Functions[FnReceiver].AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType: awslambda.FunctionUrlAuthType_NONE,
	})
}
