// Package testenv gives integration tests their own table and queues on the
// real emulators. Emulators are shared: `make test` starts one pair and
// exports GIFQ_TEST_DYNAMODB_URL / GIFQ_TEST_SQS_URL; without them, Main
// starts a pair for the test binary and stops it at the end.
package testenv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

var dynamoURL, sqsURL string

// Main runs a package's tests with emulators available.
func Main(m *testing.M) {
	dynamoURL, sqsURL = os.Getenv("GIFQ_TEST_DYNAMODB_URL"), os.Getenv("GIFQ_TEST_SQS_URL")
	var emu *emulator.Emulators
	if dynamoURL == "" || sqsURL == "" {
		var err error
		emu, err = emulator.Start(context.Background(), emulator.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "testenv:", err)
			os.Exit(1)
		}
		dynamoURL, sqsURL = emu.DynamoDBURL, emu.SQSURL
	}
	code := m.Run()
	if emu != nil {
		emu.Stop()
	}
	if kmsEmu != nil {
		kmsEmu.Stop()
	}
	os.Exit(code)
}

// Env is one test's private world on the shared emulators.
type Env struct {
	DB        *dynamodb.Client
	SQS       *sqs.Client
	Table     string
	Queues    queue.URLs
	DynamoURL string
	SQSURL    string
}

var seq atomic.Int64

// New creates a fresh table (without its stream) and queue pair for t.
func New(t testing.TB) *Env {
	t.Helper()
	return newEnv(t, false)
}

// NewWithStream is New with the table's stream, for a test that reads it.
func NewWithStream(t testing.TB) *Env {
	t.Helper()
	return newEnv(t, true)
}

func newEnv(t testing.TB, stream bool) *Env {
	t.Helper()
	if dynamoURL == "" {
		t.Fatal("testenv: call testenv.Main from TestMain")
	}
	db, q := emulator.Clients(dynamoURL, sqsURL)
	name := fmt.Sprintf("t%d-%d-%s", time.Now().UnixNano()%1e9, seq.Add(1), sanitize(t.Name()))
	ctx := context.Background()
	if err := store.CreateTable(ctx, db, name, stream); err != nil {
		t.Fatalf("create table: %v", err)
	}
	urls, err := queue.CreateQueues(ctx, q, name)
	if err != nil {
		t.Fatalf("create queues: %v", err)
	}
	return &Env{DB: db, SQS: q, Table: name, Queues: urls, DynamoURL: dynamoURL, SQSURL: sqsURL}
}

func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

// The KMS emulator is started only by the first test that asks for it (most
// packages never do), or is GIFQ_TEST_KMS_URL's.
var (
	kmsOnce sync.Once
	kmsEmu  *emulator.KMS
	kmsURL  string
	kmsErr  error
)

// KMS returns a client on the KMS emulator and a fresh symmetric key of t's
// own (its ARN).
func KMS(t testing.TB) (*kms.Client, string) {
	t.Helper()
	kmsOnce.Do(func() {
		if kmsURL = os.Getenv("GIFQ_TEST_KMS_URL"); kmsURL != "" {
			return
		}
		kmsEmu, kmsErr = emulator.StartKMS(context.Background(), "", "")
		if kmsErr == nil {
			kmsURL = kmsEmu.URL
		}
	})
	if kmsErr != nil {
		t.Fatalf("testenv: KMS emulator: %v", kmsErr)
	}
	c := emulator.KMSClient(kmsURL)
	key, err := emulator.CreateKey(context.Background(), c, t.Name())
	if err != nil {
		t.Fatalf("testenv: create a KMS key: %v", err)
	}
	return c, key
}
