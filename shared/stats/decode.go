package stats

import (
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// deliverySK is the sort key of a delivery's own item: only its changes
// count (the mapping's filter passes only these; the check stays for make
// dev's poller and for a mapping without the filter).
const deliverySK = "DLV"

// FromLambda are the delivery changes of a stream batch as Lambda hands it
// over; other records are skipped on their sort key.
func FromLambda(ev events.DynamoDBEvent) []Change {
	out := make([]Change, 0, len(ev.Records))
	for _, r := range ev.Records {
		if sk, ok := r.Change.Keys["sk"]; !ok || sk.DataType() != events.DataTypeString || sk.String() != deliverySK {
			continue
		}
		out = append(out, Change{Old: lambdaImage(r.Change.OldImage), New: lambdaImage(r.Change.NewImage),
			At: r.Change.ApproximateCreationDateTime.Time})
	}
	return out
}

func lambdaImage(m map[string]events.DynamoDBAttributeValue) *Image {
	if len(m) == 0 {
		return nil
	}
	s := func(n string) string {
		if v, ok := m[n]; ok && v.DataType() == events.DataTypeString {
			return v.String()
		}
		return ""
	}
	n := func(n string) int64 {
		if v, ok := m[n]; ok && v.DataType() == events.DataTypeNumber {
			i, _ := strconv.ParseInt(v.Number(), 10, 64)
			return i
		}
		return 0
	}
	b := func(n string) bool {
		v, ok := m[n]
		return ok && v.DataType() == events.DataTypeBoolean && v.Boolean()
	}
	return image(s, n, b)
}

// FromStreams are the delivery changes of records read with the DynamoDB
// Streams API (make dev's poller).
func FromStreams(records []st.Record) []Change {
	out := make([]Change, 0, len(records))
	for _, r := range records {
		if r.Dynamodb == nil {
			continue
		}
		if sk, ok := r.Dynamodb.Keys["sk"].(*st.AttributeValueMemberS); !ok || sk.Value != deliverySK {
			continue
		}
		c := Change{Old: streamImage(r.Dynamodb.OldImage), New: streamImage(r.Dynamodb.NewImage)}
		if r.Dynamodb.ApproximateCreationDateTime != nil {
			c.At = *r.Dynamodb.ApproximateCreationDateTime
		}
		out = append(out, c)
	}
	return out
}

func streamImage(m map[string]st.AttributeValue) *Image {
	if len(m) == 0 {
		return nil
	}
	s := func(n string) string {
		if v, ok := m[n].(*st.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	n := func(n string) int64 {
		if v, ok := m[n].(*st.AttributeValueMemberN); ok {
			i, _ := strconv.ParseInt(v.Value, 10, 64)
			return i
		}
		return 0
	}
	b := func(n string) bool {
		v, ok := m[n].(*st.AttributeValueMemberBOOL)
		return ok && v.Value
	}
	return image(s, n, b)
}

// image reads a delivery item's fields (domain.Delivery's attribute names).
func image(s func(string) string, n func(string) int64, b func(string) bool) *Image {
	return &Image{Account: s("account_id"), Endpoint: s("endpoint_id"), Status: s("status"),
		LastAttemptID: s("last_attempt_id"), LastStatus: int(n("last_status")), LastError: s("last_error"),
		LastMs: n("last_ms"), DLQPending: b("dlq_pending")}
}
