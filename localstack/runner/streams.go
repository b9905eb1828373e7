package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Streams is what the stream poller calls (DynamoDB Streams).
type Streams interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// StreamPoller does what the stats function's event source mapping does on
// the table's stream: reads each shard in order, in batches of up to
// BatchSize, and hands each batch to Apply; a batch Apply fails is read
// again (from the same iterator) up to MaxRetries times, then skipped, so a
// poison batch cannot stall the shard. Shards open when it starts are read
// from their latest record, shards that appear later from their first.
type StreamPoller struct {
	Streams    Streams
	StreamARN  string
	Apply      func(context.Context, []st.Record) error
	BatchSize  int32
	Every      time.Duration // how often an idle shard is read again (the mapping polls about 4 times a second)
	MaxRetries int
	Log        *slog.Logger

	iters   map[string]*string // shard id -> next iterator
	done    map[string]bool    // closed shards read to their end
	failing map[string]int
}

// Run polls until ctx ends.
func (p *StreamPoller) Run(ctx context.Context) {
	p.iters, p.done, p.failing = map[string]*string{}, map[string]bool{}, map[string]int{}
	first := true
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		if err := p.shards(ctx, first); err != nil && ctx.Err() == nil {
			p.Log.Warn("stats stream: describe failed", "error", err)
		} else {
			first = false
		}
		for id := range p.iters {
			for p.read(ctx, id) {
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// shards opens an iterator on each shard not yet read.
func (p *StreamPoller) shards(ctx context.Context, first bool) error {
	var start *string
	for {
		out, err := p.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.StreamARN), ExclusiveStartShardId: start})
		if err != nil {
			return err
		}
		for _, sh := range out.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			if _, open := p.iters[id]; open || p.done[id] {
				continue
			}
			kind := st.ShardIteratorTypeTrimHorizon
			if first {
				kind = st.ShardIteratorTypeLatest
			}
			it, err := p.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.StreamARN), ShardId: sh.ShardId, ShardIteratorType: kind})
			if err != nil {
				return err
			}
			p.iters[id] = it.ShardIterator
		}
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return nil
		}
		start = out.StreamDescription.LastEvaluatedShardId
	}
}

// read takes one batch from shard id; true when it was full (read again now).
func (p *StreamPoller) read(ctx context.Context, id string) bool {
	out, err := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: p.iters[id], Limit: aws.Int32(p.BatchSize)})
	if err != nil {
		if ctx.Err() == nil {
			p.Log.Warn("stats stream: read failed", "shard", id, "error", err)
		}
		return false
	}
	if len(out.Records) > 0 {
		if err := p.Apply(ctx, out.Records); err != nil {
			if p.failing[id]++; p.failing[id] <= p.MaxRetries {
				return false // the same iterator again next time
			}
			p.Log.Error("stats stream: batch skipped after retries", "shard", id, "records", len(out.Records), "error", err)
		}
	}
	delete(p.failing, id)
	if out.NextShardIterator == nil {
		delete(p.iters, id)
		p.done[id] = true
		return false
	}
	p.iters[id] = out.NextShardIterator
	return int32(len(out.Records)) == p.BatchSize
}
