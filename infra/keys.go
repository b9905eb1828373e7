package main

import (
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/envelope"
)

// signingKeyGrants are the KMS actions each function gets on the signing
// key (docs/signing.md): the api makes the envelope's data key on first use
// and opens secrets (create, rotate, show once); deliver only opens them to
// sign. The sweeper and redrive never read a secret and get nothing.
var signingKeyGrants = map[string][]string{
	FnAPI:     {"kms:Decrypt", "kms:GenerateDataKey"},
	FnDeliver: {"kms:Decrypt"},
}

// addSigningKey makes the KMS key that seals the endpoints' signing secrets
// and the accounts' ed25519 keys (package envelope), grants it function by
// function, and names it to them as KMS_KEY_ID. It follows the stack's
// removal policy like the table: a production key is kept, as every sealed
// secret in the table (and its backups) needs it.
func (s *Stack) addSigningKey(removal awscdk.RemovalPolicy) awskms.Key {
	key := awskms.NewKey(s.Stack, jsii.String("SigningKey"), &awskms.KeyProps{
		Description:       jsii.String(*s.Stack.StackName() + ": seals endpoint signing secrets and v1a signing keys (envelope data key)"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     removal,
		PendingWindow:     awscdk.Duration_Days(jsii.Number(30)),
	})
	// Only with the envelope's encryption context: the grant opens the data
	// key and nothing else anyone might encrypt under this key.
	cond := map[string]any{}
	for k, v := range envelope.EncryptionContext {
		cond["kms:EncryptionContext:"+k] = v
	}
	fns := make([]string, 0, len(signingKeyGrants))
	for fn := range signingKeyGrants {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	for _, fn := range fns {
		s.Roles[fn].AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:    jsii.Strings(signingKeyGrants[fn]...),
			Resources:  jsii.Strings(*key.KeyArn()),
			Conditions: &map[string]any{"StringEquals": cond},
		}))
		s.Functions[fn].AddEnvironment(jsii.String("KMS_KEY_ID"), key.KeyArn(), nil)
	}
	s.SigningKey = key
	return key
}
