package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The length bounds of docs/api-bounds.md that had no test of their own:
// each input one past its bound is refused (422; a header, 400) and writes
// nothing.
func TestInputLengthsAreBounded(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	longURL := "https://example.com/" + strings.Repeat("a", 2049-len("https://example.com/"))
	var types []string
	for i := range 65 {
		types = append(types, fmt.Sprintf(`"t.%d"`, i))
	}
	for name, c := range map[string]struct{ method, path, body string }{
		"a URL of 2,049 bytes":       {"POST", "/v1/endpoints", `{"url":"` + longURL + `"}`},
		"a filter of 65 types":       {"PATCH", "/v1/endpoints/" + ep, `{"event_types":[` + strings.Join(types, ",") + `]}`},
		"a type of 201 characters":   {"PATCH", "/v1/endpoints/" + ep, `{"event_types":["` + strings.Repeat("t", 201) + `"]}`},
		"a description of 501 chars": {"PATCH", "/v1/endpoints/" + ep, `{"description":"` + strings.Repeat("d", 501) + `"}`},
	} {
		f.calls.Reset()
		if a := f.do(t, f.keyA, c.method, c.path, c.body); a.status != 422 {
			t.Errorf("%s: %d %.200s", name, a.status, a.raw)
		}
		if w := f.calls.Count("DynamoDB.TransactWriteItems") + f.calls.Count("DynamoDB.PutItem"); w != 0 {
			t.Errorf("%s: %d writes", name, w)
		}
	}
	in := events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/events", Body: `{"event":"payout.paid"}`,
		Headers: map[string]string{"Authorization": "Bearer " + f.keyA, "Idempotency-Key": strings.Repeat("k", 256)}}
	if a := f.doRequest(t, in); a.status != 400 || a.code() != "invalid_idempotency_key" {
		t.Errorf("an idempotency key of 256 bytes: %d %.200s", a.status, a.raw)
	}
}
