// Package docs carries the API's OpenAPI document (openapi.yaml) into the
// binaries that serve it or check against it.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml, as committed.
//
//go:embed openapi.yaml
var OpenAPI []byte
