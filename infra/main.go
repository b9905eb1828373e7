// Command infra is the AWS CDK app of the webhook delivery system
// (`cdk synth`, `cdk deploy`; cdk.json runs it as `go run ./infra`).
// Configuration comes from CDK context; see config.go and docs/deploy.md.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

func main() {
	defer jsii.Close()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		jsii.Close()
		os.Exit(1)
	}
}

func run() error {
	app := awscdk.NewApp(nil)
	cfg, err := ConfigFromContext(app.Node())
	if err != nil {
		return err
	}
	assetDir := os.Getenv("LAMBDA_ASSET_DIR")
	if assetDir == "" {
		assetDir = "bin"
	}
	// Builds what is missing (cdk runs this app from the repository root)
	// and refuses a binary of the wrong architecture (assets.go).
	if err := PrepareAssets(".", assetDir, cfg.LambdaArchitecture, os.Stderr); err != nil {
		return err
	}
	// No env: the stack is environment-agnostic, so `cdk synth` needs no
	// credentials and no lookups; `cdk deploy` takes the account and region
	// from the caller's AWS configuration.
	NewStack(app, StackName(cfg.Stage), &StackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String(fmt.Sprintf("gifq webhook delivery system (%s)", cfg.Stage)),
		},
		Config:   cfg,
		AssetDir: assetDir,
	})
	// cdk-nag: any unsuppressed AwsSolutions finding fails the synth.
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
	return nil
}
