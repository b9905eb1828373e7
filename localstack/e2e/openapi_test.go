package e2e

import (
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gifq/webhooks/shared/apispec"
)

// Every answer a test gets through h.call is checked against
// docs/openapi.yaml: a route, status, header or field the document does not
// describe fails the test that saw it.
var (
	specDoc    = sync.OnceValues(func() (*openapi3.T, error) { return apispec.Load() })
	validators sync.Map // API base URL -> *apispec.Validator
)

func (h *harness) conforms(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	v, ok := validators.Load(h.api)
	if !ok {
		doc, err := specDoc()
		if err != nil {
			t.Fatal(err)
		}
		nv, err := apispec.NewValidator(doc, h.api)
		if err != nil {
			t.Fatal(err)
		}
		v, _ = validators.LoadOrStore(h.api, nv)
	}
	if err := v.(*apispec.Validator).Check(req, status, header, body); err != nil {
		t.Errorf("answer does not conform to docs/openapi.yaml: %v\n%.500s", err, body)
	}
}

// The check itself catches an answer that breaks the document.
func TestConformanceCheckCatchesAnUndocumentedAnswer(t *testing.T) {
	doc, err := specDoc()
	if err != nil {
		t.Fatal(err)
	}
	v, err := apispec.NewValidator(doc, "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:1/v1/endpoints/ep_1", nil)
	json := http.Header{"Content-Type": {"application/json"}}
	good := `{"id":"ep_1","url":"https://x.test/","description":"","event_types":[],"disabled":false,"settings":{"headers":{}},"health":{"breaker":"closed","consecutive_failures":0},"created_at":"2026-12-01T00:00:00Z","updated_at":"2026-12-01T00:00:00Z"}`
	if err := v.Check(req, 200, json, []byte(good)); err != nil {
		t.Fatalf("a conforming answer was refused: %v", err)
	}
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"missing field":      {200, `{"id":"ep_1"}`},
		"extra field":        {200, good[:len(good)-1] + `,"secret_hash":"x"}`},
		"undocumented 418":   {418, `{"error":{"code":"x","message":"y"}}`},
		"error not an Error": {404, `{"message":"nope"}`},
	} {
		if err := v.Check(req, c.status, json, []byte(c.body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
