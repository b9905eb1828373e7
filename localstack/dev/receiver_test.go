package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
)

func TestStatusForPath(t *testing.T) {
	for path, want := range map[string]int{
		"/webhooks":       http.StatusNoContent,
		"/":               http.StatusNoContent,
		"/status/500":     500,
		"/status/503/":    503,
		"/status/410":     410,
		"/status/200":     200,
		"/status/199":     http.StatusNoContent, // not a final status
		"/status/600":     http.StatusNoContent,
		"/status/abc":     http.StatusNoContent,
		"/x/status/500":   http.StatusNoContent,
		"/status/500/xyz": http.StatusNoContent,
	} {
		if got := statusFor(path); got != want {
			t.Errorf("statusFor(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestOnReceiver(t *testing.T) {
	base := "http://127.0.0.1:9000"
	for url, want := range map[string]bool{
		base + "/webhooks":          true,
		base + "/status/500":        true,
		base:                        true,
		base + "?x=1":               true,
		"http://127.0.0.1:90001/x":  false, // another port that starts with the same digits
		"http://127.0.0.1:9000.x/a": false,
		"http://localhost:9000/a":   false,
		"https://example.com/hooks": false,
	} {
		if got := onReceiver(url, base); got != want {
			t.Errorf("onReceiver(%q) = %v, want %v", url, got, want)
		}
	}
}

func TestRejectionSaysWhy(t *testing.T) {
	base := "http://127.0.0.1:9000"
	demo := domain.Endpoint{ID: "ep_demo", AccountID: "acct_dev", URL: base + "/webhooks"}
	other := domain.Endpoint{ID: "ep_other", AccountID: "acct_acme", URL: base + "/webhooks"}
	noMatch := errors.Join(signing.ErrNoMatch, signing.ErrNoMatch)
	cases := []struct {
		name  string
		verr  error
		owner *domain.Endpoint
		mine  []domain.Endpoint
		want  []string
	}{
		{"another account's endpoint", noMatch, &other, []domain.Endpoint{demo},
			[]string{"signed with the secret of endpoint ep_other (account acct_acme", "ep_demo) only"}},
		{"no endpoint of the dev account here", errors.Join(signing.ErrNoSecret, signing.ErrNoSecret), &other, nil,
			[]string{"ep_other", "no endpoint of the dev account points at " + base}},
		{"not a delivery", errors.Join(signing.ErrNoHeader, signing.ErrNoHeader), nil, []domain.Endpoint{demo},
			[]string{"no signature headers"}},
		{"too old", errors.Join(signing.ErrTooOld, signing.ErrTooOld), &demo, []domain.Endpoint{demo},
			[]string{"timestamp is more than 5m0s from the receiver's clock"}},
		{"own endpoint, wrong signature", noMatch, &demo, []domain.Endpoint{demo},
			[]string{"no signature matches", "rotated out"}},
	}
	for _, c := range cases {
		got := rejection(c.verr, c.owner, c.mine, base)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", c.name, got, w)
			}
		}
	}
}

func TestPickDemoMovesMakeDevsOwnEndpoint(t *testing.T) {
	url := "http://127.0.0.1:9000/webhooks"
	demoElsewhere := domain.Endpoint{ID: "ep_old", URL: "http://127.0.0.1:19000/webhooks", Description: demoDescription}
	mine := domain.Endpoint{ID: "ep_user", URL: "http://127.0.0.1:19000/status/500"}
	here := domain.Endpoint{ID: "ep_here", URL: url}
	for _, c := range []struct {
		name     string
		eps      []domain.Endpoint
		wantID   string
		wantMove bool
	}{
		{"fresh data", nil, "", false},
		{"already here", []domain.Endpoint{demoElsewhere, here}, "ep_here", false},
		{"the receiver moved", []domain.Endpoint{mine, demoElsewhere}, "ep_old", true},
		{"only a user's endpoint", []domain.Endpoint{mine}, "", false},
	} {
		id, move := pickDemo(c.eps, url)
		if id != c.wantID || move != c.wantMove {
			t.Errorf("%s: pickDemo = %q, %v; want %q, %v", c.name, id, move, c.wantID, c.wantMove)
		}
	}
}
