package runner_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/localstack/runner"
)

type echo struct {
	N    int    `json:"n"`
	Body string `json:"body"`
}

// invokeAtOnce invokes h from 16 goroutines at once and counts the answers
// that were not their own request's.
func invokeAtOnce(h lambda.Handler) (wrong int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				in := echo{N: g*1000 + i, Body: strconv.Itoa(g) + "-" + strconv.Itoa(i) + " a body long enough to be worth a buffer"}
				payload, _ := json.Marshal(in)
				out, err := h.Invoke(context.Background(), payload)
				var got echo
				if err != nil || json.Unmarshal(out, &got) != nil || got != in {
					mu.Lock()
					wrong++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return wrong
}

func echoFn(_ context.Context, in echo) (echo, error) { return in, nil }

// lambda.NewHandler answers with a buffer it reuses for its next
// invocation: its first answer, read after a second invocation, is the
// second's ({"n":2,...}). The Lambda runtime invokes one at a time; the
// local runner invokes from many goroutines at once (the API's requests, the
// poller's 32 invocations), where answers crossed: a request could read
// another's response, and the poller another batch's failures. The runner's
// handler keeps each answer its caller's.
func TestAnAnswerStaysItsCallersAfterTheNextInvocation(t *testing.T) {
	h := runner.Concurrent(echoFn)
	first, err := h.Invoke(context.Background(), []byte(`{"n":1,"body":"first"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Invoke(context.Background(), []byte(`{"n":2,"body":"second"}`)); err != nil {
		t.Fatal(err)
	}
	var got echo
	if err := json.Unmarshal(first, &got); err != nil || got != (echo{N: 1, Body: "first"}) {
		t.Fatalf("the first answer after a second invocation: %s", first)
	}
}

// The same from 16 goroutines at once (run it with -race as well).
func TestConcurrentInvocationsGetTheirOwnAnswers(t *testing.T) {
	if wrong := invokeAtOnce(runner.Concurrent(echoFn)); wrong != 0 {
		t.Fatalf("%d of 3,200 invocations at once got another's answer", wrong)
	}
}
