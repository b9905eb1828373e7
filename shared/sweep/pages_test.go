package sweep

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/store"
)

// eachID walks every page of a shard in order and stops at the first error,
// the query's or the callback's.
func TestEachIDWalksEveryPageAndStopsAtAnError(t *testing.T) {
	pages := [][]string{{"a", "b"}, {"c"}, {"d"}}
	query := func(start store.Cursor) ([]string, store.Cursor, error) {
		i := 0
		if start != nil {
			i = len(start["i"].(*types.AttributeValueMemberS).Value)
		}
		var next store.Cursor
		if i+1 < len(pages) {
			next = store.Cursor{"i": &types.AttributeValueMemberS{Value: string(make([]byte, i+1))}}
		}
		return pages[i], next, nil
	}
	var seen []string
	if err := eachID(context.Background(), query, func(id string) error { seen = append(seen, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []string{"a", "b", "c", "d"}) {
		t.Fatalf("walked %v", seen)
	}
	boom := errors.New("boom")
	seen = nil
	err := eachID(context.Background(), query, func(id string) error {
		seen = append(seen, id)
		if id == "b" {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !reflect.DeepEqual(seen, []string{"a", "b"}) {
		t.Fatalf("after an error: %v, walked %v", err, seen)
	}
	failing := func(store.Cursor) ([]string, store.Cursor, error) { return nil, nil, boom }
	if err := eachID(context.Background(), failing, func(string) error { t.Fatal("called"); return nil }); !errors.Is(err, boom) {
		t.Fatalf("a failing query: %v", err)
	}
}
