package destination

import (
	"strings"

	"github.com/gifq/webhooks/shared/domain"
)

// Schema is a destination type's config, declared once by its provider:
// the provider validates by it (Provider.Validate), and the API's type
// list, the OpenAPI document's enum and the portal's form are checked
// against the registered schemas (tests in shared/httpapi and the portal).
type Schema struct {
	Type  domain.DestinationType
	Label string // the portal's name for it: "Amazon SQS queue"
	// Block is the API's object holding Fields ("aws"); empty: the
	// endpoint's own url and settings (HTTP).
	Block  string
	Fields []Field
}

// Field is one config field of a destination type.
type Field struct {
	Name     string // the JSON name inside Block: "target_arn"
	Label    string // the form's label
	Example  string // a placeholder showing its shape
	Required bool
}

// cmpType orders types with http first, then by name.
func cmpType(a, b domain.DestinationType) int {
	switch {
	case a == b:
		return 0
	case a == domain.DestinationHTTP:
		return -1
	case b == domain.DestinationHTTP:
		return 1
	}
	return strings.Compare(string(a), string(b))
}

// Types are the names of the types schemas declare, in order.
func Types(schemas []Schema) []string {
	out := make([]string, len(schemas))
	for i, s := range schemas {
		out[i] = string(s.Type)
	}
	return out
}
