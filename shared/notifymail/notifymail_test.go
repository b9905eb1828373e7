package notifymail

import (
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/notify"
	"github.com/gifq/webhooks/shared/opevents"
)

var at = time.Date(2026, 12, 6, 4, 43, 40, 0, time.UTC)

func notice(t *testing.T, e opevents.Event) notify.Notice {
	t.Helper()
	n, ok := notify.For(e, 5*24*time.Hour, "https://portal.example/")
	if !ok {
		t.Fatalf("%s makes no notice", e.Type)
	}
	return n
}

// Each notice's mail names the endpoint and what happened in its subject,
// and says in its body what failed, since when, and the calls that get the
// missed events back (and enable a disabled endpoint), with the portal link.
func TestCompose(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://hooks.example.com/gifq", FailingSince: at.UnixMilli()}
	gone := ep
	gone.Disabled, gone.DisabledReason = true, "the receiver answered 410 Gone"
	for _, c := range []struct {
		name    string
		e       opevents.Event
		subject string
		body    []string
		not     []string
	}{
		{"failing", opevents.Failing(ep, domain.Attempt{StatusCode: 503}, at),
			"[gifq] Endpoint ep_1 is failing: https://hooks.example.com/gifq",
			[]string{"Deliveries to this endpoint are failing.", "Endpoint:       ep_1\n", "URL:            https://hooks.example.com/gifq\n",
				"Failing since:  2026-12-06T04:43:40Z\n", "Last answer:    HTTP 503\n", "Disables at:    2026-12-11T04:43:40Z\n",
				`POST /v1/endpoints/ep_1/recover {"since": "2026-12-06T04:43:40Z"}`, "In the portal: https://portal.example/#/endpoints/ep_1\n",
				"account acct_1"},
			[]string{"To enable it again", "Recovered at"}},
		{"disabling", opevents.Disabling(ep, domain.Attempt{ErrorClass: "timeout"}, at.Add(5*24*time.Hour), at.Add(4*24*time.Hour)),
			"[gifq] Endpoint ep_1 will be disabled: https://hooks.example.com/gifq",
			[]string{"will be disabled at disables_at", "Failing since:  2026-12-06T04:43:40Z\n", "Last error:     timeout\n",
				"Disables at:    2026-12-11T04:43:40Z\n", `POST /v1/endpoints/ep_1/recover {"since": "2026-12-06T04:43:40Z"}`,
				"In the portal: https://portal.example/#/endpoints/ep_1\n"},
			[]string{"To enable it again", "Recovered at"}},
		{"disabled", opevents.Disabled(gone, opevents.ByReceiver, at),
			"[gifq] Endpoint ep_1 was disabled: https://hooks.example.com/gifq",
			[]string{"This endpoint is disabled", "Reason:         the receiver answered 410 Gone\n",
				"To enable it again:\n  PATCH /v1/endpoints/ep_1 {\"disabled\": false}\n", "POST /v1/endpoints/ep_1/recover {\"since\": "},
			[]string{"Failing since", "Disables at"}},
		{"recovered", opevents.Recovered(ep, at.Add(3*time.Hour)),
			"[gifq] Endpoint ep_1 recovered: https://hooks.example.com/gifq",
			[]string{"This endpoint answers again.", "Recovered at:   2026-12-06T07:43:40Z\n",
				`POST /v1/endpoints/ep_1/recover {"since": "2026-12-06T04:43:40Z", "until": "2026-12-06T07:43:40Z"}`},
			[]string{"To enable it again", "Disables at"}},
	} {
		m := Compose(notice(t, c.e))
		if m.Subject != c.subject {
			t.Errorf("%s subject %q, want %q", c.name, m.Subject, c.subject)
		}
		for _, s := range c.body {
			if !strings.Contains(m.Text, s) {
				t.Errorf("%s body lacks %q:\n%s", c.name, s, m.Text)
			}
		}
		for _, s := range c.not {
			if strings.Contains(m.Text, s) {
				t.Errorf("%s body has %q:\n%s", c.name, s, m.Text)
			}
		}
	}
}

// A receiver's error or URL cannot add a header line to the mail or a line
// of its own to the body.
func TestComposeKeepsValuesOnTheirLine(t *testing.T) {
	n := notice(t, opevents.Failing(domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://h.example/x", FailingSince: at.UnixMilli()},
		domain.Attempt{ErrorClass: "boom\r\nBcc: victim@example.com"}, at))
	n.Body.Endpoint.URL = "https://h.example/x\r\nBcc: victim@example.com"
	m := Compose(n)
	if strings.ContainsAny(m.Subject, "\r\n") {
		t.Errorf("subject %q", m.Subject)
	}
	for _, l := range strings.Split(m.Text, "\n") {
		if strings.HasPrefix(l, "Bcc:") || strings.Contains(l, "\r") {
			t.Errorf("a value broke its line: %q", l)
		}
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"jane.doe@example.com": "j***@example.com", "x@y.example": "x***@y.example", "nonsense": "***", "@d.example": "***"} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
