package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/gifq/webhooks/docs"
	"github.com/gifq/webhooks/shared/apispec"
)

// The routes without a key, served before the router.
var publicRoutes = []string{"GET /healthz", "GET " + openAPIPath, "GET /v1/accounts/*/jwks.json"}

// pathParam is a path template's {parameter}, a * in a route's name.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// Every route the router serves is in docs/openapi.yaml, and every operation
// there is a route.
func TestDocumentAndRouterHaveTheSameRoutes(t *testing.T) {
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	documented := apispec.Operations(doc)
	served := append(Routes(), publicRoutes...)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is served but not in docs/openapi.yaml", r)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			t.Errorf("docs/openapi.yaml has %s, which the router does not serve", op)
		}
	}
	// Every operation needs the key unless it is public, and says so.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			public := op.Security != nil && len(*op.Security) == 0
			if want := slices.Contains(publicRoutes, method+" "+pathParam.ReplaceAllString(path, "*")); public != want {
				t.Errorf("%s %s: public in the document %v, public in the router %v", method, path, public, want)
			}
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId (the client's method names)", method, path)
			}
		}
	}
}

// GET /v1/openapi.json answers the committed YAML, as JSON, without a key.
func TestOpenAPIJSONIsTheDocument(t *testing.T) {
	a := &API{Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	out, err := a.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: openAPIPath})
	if err != nil || out.StatusCode != 200 || out.Headers["Content-Type"] != "application/json" {
		t.Fatalf("%d %v %v", out.StatusCode, out.Headers, err)
	}
	var served, want any
	if err := json.Unmarshal([]byte(out.Body), &served); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(docs.OpenAPI, &want); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	_ = json.Unmarshal(wantJSON, &want)
	if !reflect.DeepEqual(served, want) {
		t.Fatal("GET /v1/openapi.json is not docs/openapi.yaml")
	}
	if served.(map[string]any)["openapi"] != "3.1.0" {
		t.Fatalf("openapi: %v", served.(map[string]any)["openapi"])
	}
}

// maxLength in the document counts characters; so does the API.
func TestDescriptionLengthCountsCharacters(t *testing.T) {
	if descriptionTooLong(strings.Repeat("界", 500)) {
		t.Error("500 characters (1500 bytes) refused")
	}
	if !descriptionTooLong(strings.Repeat("a", 501)) {
		t.Error("501 characters accepted")
	}
}
