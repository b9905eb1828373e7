package apiclient

import (
	"context"
	"net/http"
)

// WithBearer sends key as Authorization: Bearer on every request.
func WithBearer(key string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}
