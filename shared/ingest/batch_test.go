package ingest

import (
	"context"
	"errors"
	"testing"
)

func TestBatchSize(t *testing.T) {
	svc := &Service{}
	for _, n := range []int{0, MaxBatch + 1} {
		if _, err := svc.IngestBatch(context.Background(), "acct", make([]Item, n)); !errors.Is(err, ErrBatchSize) {
			t.Errorf("%d items: %v, want ErrBatchSize", n, err)
		}
	}
}
