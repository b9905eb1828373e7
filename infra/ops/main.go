// Command ops is the operators' tool for accounts and API keys, against the
// local emulators (make account) or a deployed stack's table:
//
//	go run ./infra/ops -table <TableName> account create -name acme [-rate 10]
//	go run ./infra/ops -table <TableName> account set-rate -account acct_... -rate 20
//	go run ./infra/ops -table <TableName> key create -account acct_...
//	go run ./infra/ops -table <TableName> key list -account acct_...
//	go run ./infra/ops -table <TableName> key revoke -account acct_... -key key_...
//	go run ./infra/ops -table <TableName> account set-ingest-limit -account acct_... -per-second 20 -burst 100
//	go run ./infra/ops -table <TableName> key set-limit -account acct_... -key key_... -per-second 2 -burst 10
//	go run ./infra/ops -table <TableName> key show-limit -account acct_... -key key_...
//	go run ./infra/ops -table <TableName> -kms-key <KmsKeyId> endpoints reseal
//	GIFQ_API_KEY=... go run ./infra/ops -api <ApiUrl> delivery show -id dlv_...
//	GIFQ_API_KEY=... go run ./infra/ops -api <ApiUrl> delivery resend -id dlv_...
//	GIFQ_API_KEY=... go run ./infra/ops -api <ApiUrl> event show -id evt_...
//	GIFQ_API_KEY=... go run ./infra/ops -api <ApiUrl> endpoint recover -id ep_... -since 2026-11-30T00:00:00Z
//
// The account and key commands use the standard AWS credential chain;
// AWS_ENDPOINT_URL_DYNAMODB points them at an emulator. A key is printed
// once and stored only as its SHA-256. The delivery, event and endpoint
// commands go through the API with the generated client (api.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/gifq/webhooks/shared/envelope"
	"github.com/gifq/webhooks/shared/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ops:", err)
		os.Exit(1)
	}
}

const usage = `usage: ops [-table NAME] <command>
  account create -name NAME [-rate PER_SECOND]
  account set-rate -account ID -rate PER_SECOND   (0: the deployment default)
  key create -account ID
  key list -account ID
  key revoke -account ID -key KEY_ID
  endpoints reseal   (with -kms-key: seal every secret and custom header written before sealing)
` + limitUsage

func run(ctx context.Context, args []string) error {
	global := flag.NewFlagSet("ops", flag.ContinueOnError)
	table := global.String("table", os.Getenv("TABLE_NAME"), "the stack's table (TableName output); default $TABLE_NAME")
	apiURL := global.String("api", os.Getenv("GIFQ_API_URL"), "the API's URL (ApiUrl output), for the API commands; default $GIFQ_API_URL")
	kmsKey := global.String("kms-key", os.Getenv("KMS_KEY_ID"), "the stack's KMS key (KMS_KEY_ID), for endpoints reseal; default $KMS_KEY_ID")
	if err := global.Parse(args); err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) >= 2 && isAPICommand(rest[0]) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return runAPI(ctx, *apiURL, rest, os.Stdout)
	}
	if len(rest) < 2 || *table == "" {
		return errors.New(usage + "\n" + apiUsage)
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	st := store.New(db, *table)
	if rest[0]+" "+rest[1] == "endpoints reseal" {
		if *kmsKey == "" {
			return errors.New("endpoints reseal needs -kms-key (the stack's KMS key id)")
		}
		st.SealWith(envelope.New(kms.NewFromConfig(cfg), *kmsKey, st))
		read, sealed, err := st.ResealAll(ctx, db) // no timeout: a whole table's scan
		fmt.Printf("endpoints read %d, sealed %d\n", read, sealed)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	if isLimitCommand(rest[0] + " " + rest[1]) {
		return setIngestLimit(ctx, st, rest[0]+" "+rest[1], rest[2:])
	}
	fs := flag.NewFlagSet(rest[0]+" "+rest[1], flag.ContinueOnError)
	name := fs.String("name", "", "account name")
	rate := fs.Float64("rate", 0, "deliveries per second for this account (0: the deployment default)")
	account := fs.String("account", "", "account id")
	keyID := fs.String("key", "", "key id")
	if err := fs.Parse(rest[2:]); err != nil {
		return err
	}
	switch rest[0] + " " + rest[1] {
	case "account create":
		if *name == "" {
			return errors.New("account create needs -name")
		}
		a, err := st.CreateAccount(ctx, *name, *rate)
		if err != nil {
			return err
		}
		_, secret, err := st.CreateAPIKey(ctx, a.ID)
		if err != nil {
			return err
		}
		fmt.Printf("account %s (%s)\nAPI key %s\nThe key is shown only now; store it in your secret manager.\n", a.ID, a.Name, secret)
	case "account set-rate":
		if *account == "" {
			return errors.New("account set-rate needs -account")
		}
		return st.SetAccountRate(ctx, *account, *rate)
	case "key create":
		_, secret, err := st.CreateAPIKey(ctx, *account)
		if err != nil {
			return err
		}
		fmt.Printf("API key %s\nThe key is shown only now.\n", secret)
	case "key list":
		keys, err := st.ListAPIKeys(ctx, *account)
		if err != nil {
			return err
		}
		for _, k := range keys {
			state := "active"
			if k.RevokedAt != 0 {
				state = "revoked " + time.UnixMilli(k.RevokedAt).UTC().Format(time.RFC3339)
			}
			fmt.Printf("%s  %s…  created %s  %s\n", k.ID, k.Prefix, time.UnixMilli(k.CreatedAt).UTC().Format(time.RFC3339), state)
		}
	case "key revoke":
		if *account == "" || *keyID == "" {
			return errors.New("key revoke needs -account and -key")
		}
		if err := st.RevokeAPIKey(ctx, *account, *keyID); err != nil {
			return err
		}
		fmt.Println("revoked", *keyID)
	default:
		return errors.New(usage)
	}
	return nil
}
