package domain

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRotateSecretsKeepsAtMostTwoLive(t *testing.T) {
	const now = int64(1_000_000_000)
	hour := int64(time.Hour / time.Millisecond)
	cur := Secret{Value: "cur", CreatedAt: 1}
	prev := Secret{Value: "prev", CreatedAt: 0, ExpiresAt: now + hour}
	dead := Secret{Value: "dead", ExpiresAt: now}
	rot := func(grace time.Duration, expireNow bool) Rotation {
		return Rotation{NewSecret: "new", Grace: grace, ExpirePreviousNow: expireNow, Now: now}
	}
	for _, c := range []struct {
		name    string
		secrets []Secret
		r       Rotation
		want    string
		err     error
	}{
		{"first rotation: the current one signs for the grace", []Secret{cur}, rot(time.Hour, false), "new cur@+1h", nil},
		{"no grace: the current one stops now", []Secret{cur}, rot(0, false), "new", nil},
		{"an expired previous secret is dropped", []Secret{cur, dead}, rot(time.Hour, false), "new cur@+1h", nil},
		{"a live previous secret refuses a third", []Secret{cur, prev}, rot(time.Hour, false), "", ErrPreviousSecretLive},
		{"unless it is to stop now", []Secret{cur, prev}, rot(2*time.Hour, true), "new cur@+2h", nil},
		{"the grace is capped at 24 h", []Secret{cur}, rot(7*24*time.Hour, false), "new cur@+24h", nil},
		{"a negative grace is none", []Secret{cur}, rot(-time.Hour, false), "new", nil},
		{"the current one's own earlier expiry stays", []Secret{{Value: "cur", ExpiresAt: now + hour}}, rot(2*time.Hour, false), "new cur@+1h", nil},
		{"an endpoint with no secret gets one", nil, rot(time.Hour, false), "new", nil},
		{"many live ones from before the cap: refused", []Secret{cur, prev, prev, prev}, rot(time.Hour, false), "", ErrPreviousSecretLive},
		{"many live ones, stopped now", []Secret{cur, prev, prev, prev}, rot(time.Hour, true), "new cur@+1h", nil},
	} {
		got, err := RotateSecrets(c.secrets, c.r)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if s := describe(got, now); s != c.want {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
		if len(got) > MaxLiveSecrets {
			t.Errorf("%s: %d secrets", c.name, len(got))
		}
	}
}

func describe(secrets []Secret, now int64) string {
	s := ""
	for i, sec := range secrets {
		if i > 0 {
			s += " "
		}
		s += sec.Value
		if sec.ExpiresAt != 0 {
			s += fmt.Sprintf("@+%dh", (sec.ExpiresAt-now)/int64(time.Hour/time.Millisecond))
		}
	}
	return s
}

func TestSigningSecretsNeverMoreThanTwo(t *testing.T) {
	const now = int64(1000)
	ep := Endpoint{Secrets: []Secret{{Value: "a"}, {Value: "b", ExpiresAt: now + 1}, {Value: "c", ExpiresAt: now}, {Value: "d", ExpiresAt: now + 5}, {Value: "e", ExpiresAt: now + 9}}}
	if got := fmt.Sprint(ep.SigningSecrets(now)); got != "[a b]" {
		t.Errorf("signing with %s, want the newest two live ones [a b]", got)
	}
	if got := fmt.Sprint(ep.SigningSecrets(now + 1)); got != "[a d]" {
		t.Errorf("once b expires: %s", got)
	}
	if got := PreviousSecretExpiresAt(ep.Secrets, now); got != now+1 {
		t.Errorf("previous secret expires at %d", got)
	}
	if got := PreviousSecretExpiresAt(ep.Secrets[:1], now); got != 0 {
		t.Errorf("no previous secret: %d", got)
	}
}
