package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/gifq/webhooks/docs"
)

// openAPIPath serves the OpenAPI document, without a key like /healthz.
const openAPIPath = "/v1/openapi.json"

var openAPIJSON = sync.OnceValues(func() (json.RawMessage, error) { return OpenAPIJSON(docs.OpenAPI) })

// OpenAPIJSON converts the YAML document to JSON.
func OpenAPIJSON(doc []byte) (json.RawMessage, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml as JSON: %w", err)
	}
	return b, nil
}

func (a *API) getOpenAPI() response {
	doc, err := openAPIJSON()
	if err != nil {
		return fail(http.StatusInternalServerError, "internal_error", "the OpenAPI document does not load")
	}
	r := ok(http.StatusOK, doc)
	r.headers = map[string]string{"Cache-Control": "public, max-age=300"}
	return r
}
