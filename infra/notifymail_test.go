package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// noticeSender is the localstack variant's notifyEmailFrom.
const noticeSender = "notices@gifq.example"

// With notifyEmailFrom, deliver alone may send mail, only as that address
// and only through its identity or its domain's, and is told the address;
// without it, no function may send mail or is told of any.
func TestNoticeMailGrantOnlyWithTheOption(t *testing.T) {
	identity := "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/"
	for _, v := range []string{"dev", "localstack"} {
		s := synth(t, v)
		mailer := map[string]bool{}
		if v == "localstack" {
			mailer[FnDeliver] = true
		}
		roleOf := map[string]string{}
		for _, fn := range Functions {
			_, f := s.functionByName(t, fn)
			roleOf[strings.TrimSuffix(strings.Trim(render(props(f)["Role"]), "${}"), ".Arn")] = fn
			vars, _ := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
			got, _ := vars["NOTIFY_EMAIL_FROM"].(string)
			if want := map[bool]string{true: noticeSender, false: ""}[mailer[fn]]; got != want {
				t.Errorf("%s: %s has NOTIFY_EMAIL_FROM %q, want %q", v, fn, got, want)
			}
		}
		granted := map[string]bool{}
		for _, st := range s.statements() {
			if !slices.ContainsFunc(st.Actions, func(a string) bool { return strings.HasPrefix(a, "ses:") }) {
				continue
			}
			if st.Effect != "Allow" || !slices.Equal(st.Actions, []string{"ses:SendEmail"}) ||
				!slices.Equal(slices.Sorted(slices.Values(st.Resources)), []string{identity + "gifq.example", identity + noticeSender}) ||
				fmt.Sprint(st.Condition) != "map[StringEquals:map[ses:FromAddress:"+noticeSender+"]]" {
				t.Errorf("%s: %s %v on %v if %v", v, st.Effect, st.Actions, st.Resources, st.Condition)
			}
			for _, r := range st.Roles {
				granted[roleOf[r]] = true
			}
		}
		for _, fn := range Functions {
			if granted[fn] != mailer[fn] {
				t.Errorf("%s: %s may send mail: %v", v, fn, granted[fn])
			}
		}
	}
}

func TestNotifyEmailFromMustBeAPlainAddress(t *testing.T) {
	for _, bad := range []string{"gifq.example", "Notices <notices@gifq.example>", "notices@"} {
		_, err := ParseConfig(func(k string) (string, bool) {
			if k == CtxNotifyEmailFrom {
				return bad, true
			}
			return "", false
		})
		if err == nil || !strings.Contains(err.Error(), CtxNotifyEmailFrom) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The notice publishers link to the portal: the API's own /portal/, whichever
// API type serves it (the notices and their mails carry the endpoint's page).
func TestNoticesLinkToThePortal(t *testing.T) {
	for _, v := range []string{"dev", "http"} {
		s := synth(t, v)
		for _, fn := range Functions {
			_, f := s.functionByName(t, fn)
			vars, _ := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
			got := render(vars["PORTAL_URL"])
			if fn != FnDeliver && fn != FnAPI {
				if vars["PORTAL_URL"] != nil {
					t.Errorf("%s: %s has PORTAL_URL %s", v, fn, got)
				}
				continue
			}
			if fn == FnDeliver && (!strings.HasSuffix(got, "portal/") || !strings.Contains(got, "execute-api")) {
				t.Errorf("%s: deliver has PORTAL_URL %s, want the API's /portal/", v, got)
			}
		}
	}
}
