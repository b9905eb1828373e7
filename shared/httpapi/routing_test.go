package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Found by Schemathesis (docs/apifuzz.md): answers to methods a path does not take.
func TestUndeclaredMethodsAnswer405WithTheirAllow(t *testing.T) {
	a := &API{Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	for _, c := range []struct{ method, path, allow string }{
		{"TRACE", "/healthz", "GET"},
		{"POST", "/v1/openapi.json", "GET"},
		{"OPTIONS", "/v1/events/batch", "POST"}, // not also GET: "batch" is not an event id
		{"GET", "/v1/events/batch", "POST"},
		{"DELETE", "/v1/events", "POST, GET"},
		{"PUT", "/v1/endpoints/ep_1", "GET, PATCH, DELETE"},
	} {
		out, _ := a.Handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: c.method, Path: c.path})
		if out.StatusCode != 405 || out.Headers["Allow"] != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", c.method, c.path, out.StatusCode, out.Headers["Allow"], c.allow)
		}
	}
}

// Found by Schemathesis: a null body or field read as "absent" and changed things.
func TestStrictBodiesRefuseNull(t *testing.T) {
	var v struct {
		EventTypes *[]string `json:"event_types"`
	}
	for _, body := range []string{`null`, `{"event_types":null}`, `[]`, `"x"`, `{"event_types":[]} {}`, `{"other":1}`} {
		r, failed := decodeStrict([]byte(body), &v, "")
		if !failed || r.status != 400 || r.code() != "invalid_json" {
			t.Errorf("%s: failed=%v %d %s", body, failed, r.status, r.code())
		}
	}
	if _, failed := decodeStrict([]byte(`{"event_types":["a.*"]}`), &v, ""); failed || len(*v.EventTypes) != 1 {
		t.Errorf("a good body was refused")
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"event_types":["a.*"]}` {
		t.Errorf("decoded %s", b)
	}
}
