package store

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// An event's body is kept compressed (raw DEFLATE, attribute body_z) when
// that makes its item smaller: DynamoDB bills a write by the kilobyte and
// keeps the item for the retention, and JSON shrinks several times, so a
// body of a few kilobytes costs one write unit instead of three or four. A
// small body, or one that does not shrink, stays as it is (body), and so do
// the items written before this: a reader takes either.
const compressBodyFrom = 600 // bytes; under it the event item fits one write unit as it is

// packBody replaces the event item's body with its compressed form when
// that is smaller.
func packBody(it item) error {
	b, ok := it["body"].(*types.AttributeValueMemberB)
	if !ok || len(b.Value) < compressBodyFrom {
		return nil
	}
	var z bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&z)
	if _, err := w.Write(b.Value); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if z.Len() >= len(b.Value) {
		return nil
	}
	delete(it, "body")
	it["body_z"] = &types.AttributeValueMemberB{Value: z.Bytes()}
	return nil
}

// deflaters keeps the compressors an instance made: each holds large
// tables, which a new one per event would allocate again (at the default
// level, 1.1 MB and 330 µs a 2 KB body; pooled at this one, 6 KB and
// 17-19 µs with the read back: BenchmarkEventBody2KB). The fastest level:
// JSON gives most of what it has at it, for a fraction of the CPU.
var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level: no error
	return w
}}

// inflaters likewise keeps the decompressors (about 40 KB each).
var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// eventOf decodes an event's item, its body compressed or not.
func eventOf(it item) (domain.Event, error) {
	var ev domain.Event
	if err := unpackBody(it); err != nil {
		return ev, err
	}
	err := attributevalue.UnmarshalMap(it, &ev)
	return ev, err
}

// errBodyTooLarge: a stored body that inflates past the largest body the
// API accepts is not ours.
var errBodyTooLarge = errors.New("store: an event body inflates past the largest accepted")

// unpackBody puts a compressed body back where the event's decoding reads
// it.
func unpackBody(it item) error {
	z, ok := it["body_z"].(*types.AttributeValueMemberB)
	if !ok {
		return nil
	}
	r := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(z.Value), nil); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(r, domain.MaxBodyBytes+1))
	if err != nil {
		return err
	}
	if len(b) > domain.MaxBodyBytes {
		return errBodyTooLarge
	}
	delete(it, "body_z")
	it["body"] = &types.AttributeValueMemberB{Value: b}
	return nil
}
