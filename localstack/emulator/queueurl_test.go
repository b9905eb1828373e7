package emulator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/queue"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The SQS emulator's queue URLs name its address once
// (http://127.0.0.1:4566/000000000000/<name>, not fauxqs's
// sqs.<region>.127.0.0.1:4566:4566), so make dev's banner prints URLs that
// work as they are, and they do.
func TestQueueURLsNameTheEmulatorAddressOnce(t *testing.T) {
	env := testenv.New(t)
	for _, u := range []string{env.Queues.Delivery, env.Queues.DLQ} {
		if !strings.HasPrefix(u, env.SQSURL+"/000000000000/") {
			t.Errorf("queue URL %s, want %s/000000000000/<name>", u, env.SQSURL)
		}
	}
	if _, err := env.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(env.Queues.DLQ), MessageBody: aws.String("x")}); err != nil {
		t.Fatalf("send to %s: %v", env.Queues.DLQ, err)
	}
}

// Queues kept in a data folder are served under the URL of the address the
// emulator listens on now, also when it listened elsewhere before.
func TestKeptQueuesTakeTheNewAddress(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	start := func() (*emulator.Emulators, queue.URLs) {
		emu, err := emulator.Start(ctx, emulator.Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		_, q := emulator.Clients(emu.DynamoDBURL, emu.SQSURL)
		urls, err := queue.CreateQueues(ctx, q, "kept")
		if err != nil {
			emu.Stop()
			t.Fatal(err)
		}
		return emu, urls
	}
	first, _ := start()
	first.Stop()
	second, urls := start() // another free port, the same folder
	defer second.Stop()
	if want := second.SQSURL + "/000000000000/kept-deliveries"; urls.Delivery != want {
		t.Errorf("kept queue's URL %s, want %s", urls.Delivery, want)
	}
}
