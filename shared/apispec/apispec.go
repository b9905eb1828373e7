// Package apispec is the API's OpenAPI document (docs/openapi.yaml) as a Go
// value: its operations, for the test that holds it to the router, and a
// validator that checks an answer against it, for the end-to-end tests.
package apispec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/gifq/webhooks/docs"
)

// Load parses and validates the document.
func Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("docs/openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("docs/openapi.yaml is not a valid document: %w", err)
	}
	return doc, nil
}

var param = regexp.MustCompile(`\{[^}]+\}`)

// Operations lists the document's operations as "METHOD /path/*", a * for
// each path parameter (the form httpapi.Routes uses), sorted.
func Operations(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, strings.ToUpper(method)+" "+param.ReplaceAllString(path, "*"))
		}
	}
	sort.Strings(out)
	return out
}

// Validator checks answers from a server at one base URL against the document.
type Validator struct {
	router routers.Router
}

// NewValidator routes requests to baseURL (e.g. http://127.0.0.1:8080) by the document.
func NewValidator(doc *openapi3.T, baseURL string) (*Validator, error) {
	d := *doc
	d.Servers = openapi3.Servers{{URL: strings.TrimSuffix(baseURL, "/")}}
	r, err := gorillamux.NewRouter(&d)
	if err != nil {
		return nil, err
	}
	return &Validator{router: r}, nil
}

// Check validates one answer: the request must be one of the document's
// operations, and the status, headers and body one of its answers. The
// request itself is not checked (tests send invalid requests on purpose).
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := v.router.FindRoute(req)
	switch {
	// What is not an operation answers as the router does: 404 for a path
	// it does not have, 405 for a method a path does not take.
	case errors.Is(err, routers.ErrPathNotFound) && status == http.StatusNotFound,
		errors.Is(err, routers.ErrMethodNotAllowed) && status == http.StatusMethodNotAllowed:
		return nil
	case err != nil:
		return fmt.Errorf("%s %s is not in docs/openapi.yaml: %w", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		return fmt.Errorf("%s %s answered %d not as docs/openapi.yaml says: %w", req.Method, req.URL.Path, status, err)
	}
	return nil
}
