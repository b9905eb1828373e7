package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/config"
)

// GET /v1/egress-ips answers the stack's static addresses (EGRESS_IPS) to
// any API key or portal session, and nothing without one.
func TestEgressIPs(t *testing.T) {
	f := newFixture(t, map[string]string{"EGRESS_IPS": "203.0.113.7, 198.51.100.20"})
	a := f.do(t, f.keyA, "GET", "/v1/egress-ips", "")
	if a.status != 200 || fmt.Sprint(a.body["ips"]) != "[203.0.113.7 198.51.100.20]" || len(a.body) != 1 {
		t.Errorf("with a key: %d %s", a.status, a.raw)
	}
	_, token, _ := f.session(t, f.keyB, `{"read_only":true}`)
	if a := f.do(t, token, "GET", "/v1/egress-ips", ""); a.status != 200 || fmt.Sprint(a.body["ips"]) != "[203.0.113.7 198.51.100.20]" {
		t.Errorf("with a read-only portal session: %d %s", a.status, a.raw)
	}
	if a := f.do(t, "", "GET", "/v1/egress-ips", ""); a.status != 401 {
		t.Errorf("without a key: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "POST", "/v1/egress-ips", "{}"); a.status != 405 || a.headers["Allow"] != "GET" {
		t.Errorf("POST: %d %v %s", a.status, a.headers, a.raw)
	}
}

// Without the option the list is empty: [], not null.
func TestEgressIPsNone(t *testing.T) {
	f := newFixture(t, nil)
	if a := f.do(t, f.keyA, "GET", "/v1/egress-ips", ""); a.status != 200 || a.raw != `{"ips":[]}` {
		t.Errorf("%d %s", a.status, a.raw)
	}
}

// A malformed EGRESS_IPS stops the function at start, naming the entry.
func TestEgressIPsConfig(t *testing.T) {
	for _, bad := range []string{"203.0.113.7,", "203.0.113.7,nat-gateway", "${Token[TOKEN.123]}"} {
		_, err := config.Parse(func(k string) string { return map[string]string{"EGRESS_IPS": bad}[k] })
		if err == nil || !strings.Contains(err.Error(), "EGRESS_IPS") {
			t.Errorf("EGRESS_IPS=%q: error %v", bad, err)
		}
	}
	c, err := config.Parse(func(k string) string { return map[string]string{"EGRESS_IPS": " 2001:db8::1 ,203.0.113.7"}[k] })
	if err != nil || strings.Join(c.EgressIPs, ",") != "2001:db8::1,203.0.113.7" {
		t.Errorf("%v %v", c.EgressIPs, err)
	}
}
