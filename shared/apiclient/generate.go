// Package apiclient is a Go client of the gifq-webhooks API, generated from
// docs/openapi.yaml by oapi-codegen (apiclient.gen.go: do not edit; run
// `make apiclient` after changing the document). The end-to-end tests and
// the ops tool call the API through it, and `make apiclient-check` fails
// when the committed client is not what the document generates, so the
// document cannot drift from what they use.
//
//	c, _ := apiclient.NewClientWithResponses("https://api.example.com", apiclient.WithBearer(key))
//	ep, _ := c.CreateEndpointWithResponse(ctx, apiclient.NewEndpoint{Url: &url} (url a string))
package apiclient

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../../docs/openapi.yaml
