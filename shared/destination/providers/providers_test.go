package providers

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gifq/webhooks/shared/apispec"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
)

func router() *destination.Router {
	r := destination.NewRouter(webhook.New(webhook.Options{}))
	UseAWS(r, aws.Config{Region: "eu-west-1"}, []string{"eu-west-1"}, "", 0)
	return r
}

// The OpenAPI document's type enum (with polling) and the aws block are the registered
// schemas: a provider added here and not documented fails this test.
func TestTheOpenAPIDocumentHasEveryRegisteredType(t *testing.T) {
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	var enum []string
	for _, v := range doc.Components.Schemas["DestinationType"].Value.Enum {
		enum = append(enum, v.(string))
	}
	schemas := router().Schemas()
	// A polling endpoint is read, never delivered to: a type with no provider.
	if want := append(destination.Types(schemas), string(domain.DestinationPolling)); !slices.Equal(enum, want) {
		t.Fatalf("docs/openapi.yaml DestinationType enum %v, registered %v", enum, want)
	}
	block := doc.Components.Schemas["AWSDestination"].Value
	for _, s := range schemas {
		if s.Block != "aws" {
			continue
		}
		for _, f := range s.Fields {
			if block.Properties[f.Name] == nil || f.Required != slices.Contains(block.Required, f.Name) {
				t.Errorf("%s: field %s (required %v) is not AWSDestination's", s.Type, f.Name, f.Required)
			}
		}
		if len(block.Properties) != len(s.Fields) {
			t.Errorf("%s: %d fields, AWSDestination has %d", s.Type, len(s.Fields), len(block.Properties))
		}
	}
}

// The portal names every registered type as its schema does.
func TestThePortalNamesEveryRegisteredType(t *testing.T) {
	js, err := os.ReadFile("../../portal/assets/portal-app.js")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const DESTINATIONS = \{(.*?)\};`).FindSubmatch(js)
	if block == nil {
		t.Fatal("portal-app.js has no DESTINATIONS")
	}
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+): '([^']*)'`).FindAllSubmatch(block[1], -1) {
		got[string(m[1])] = string(m[2])
	}
	schemas := router().Schemas()
	for _, s := range schemas {
		if got[string(s.Type)] != s.Label {
			t.Errorf("portal names %s %q, its schema %q", s.Type, got[string(s.Type)], s.Label)
		}
	}
	if len(got) != len(schemas) {
		t.Errorf("portal names %d types, %d registered", len(got), len(schemas))
	}
}
