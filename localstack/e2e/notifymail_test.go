package e2e

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ses"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/notify"
	"github.com/gifq/webhooks/shared/notifymail"
	"github.com/gifq/webhooks/shared/opevents"
)

// sentMail is one mail LocalStack's SES kept (GET /_aws/ses).
type sentMail struct {
	ID          string `json:"Id"`
	Source      string
	Subject     string
	Destination struct{ ToAddresses []string }
	Body        struct {
		Text string `json:"text_part"`
	}
}

// localSES is LocalStack's SES with from verified (LocalStack, like SES,
// refuses mail from an unverified identity), and the mails it kept that
// went to, among others, to.
func localSES(t *testing.T, from string) (*ses.Client, func(to string) []sentMail) {
	t.Helper()
	deployedOnly(t)
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := ses.NewFromConfig(cfg)
	if _, err := c.VerifyEmailIdentity(ctx, &ses.VerifyEmailIdentityInput{EmailAddress: aws.String(from)}); err != nil {
		t.Fatalf("verify %s: %v", from, err)
	}
	endpoint := strings.TrimSuffix(os.Getenv("AWS_ENDPOINT_URL"), "/")
	return c, func(to string) []sentMail {
		t.Helper()
		res, err := http.Get(endpoint + "/_aws/ses?email=" + from)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct{ Messages []sentMail }
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatalf("/_aws/ses: %v", err)
		}
		var mine []sentMail
		for _, m := range out.Messages {
			if slices.Contains(m.Destination.ToAddresses, to) {
				mine = append(mine, m)
			}
		}
		return mine
	}
}

// The sender mails a notice to the account's contacts through SES once:
// the same notice again (another attempt saw the same change) sends
// nothing, nor does a notice for an account without contacts.
func TestNoticeMailSentOnceThroughSES(t *testing.T) {
	const from = "mailer-test@gifq.example"
	c, mails := localSES(t, from)
	h := start(t, opts{})
	acct, key := h.account(t)
	to := "ops+" + strings.ToLower(acct) + "@acme.example"
	if code := h.call(t, key, "PUT", "/v1/account/notifications", `{"emails":["`+to+`"]}`, nil); code != 200 {
		t.Fatalf("PUT /v1/account/notifications: %d", code)
	}
	var logs lockedBuffer
	s := &notifymail.Sender{SES: c, From: from, Store: h.store, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct, URL: "https://hooks.acme.example/gifq", FailingSince: time.Now().UnixMilli()}
	n, _ := notify.For(opevents.Failing(ep, domain.Attempt{StatusCode: 503}, time.Now()), 0, "")
	for range 2 {
		if err := s.Send(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	got := mails(to)
	if len(got) != 1 {
		t.Fatalf("%d mails, want 1: %+v", len(got), got)
	}
	if want := notifymail.Compose(n); got[0].Source != from || got[0].Subject != want.Subject || got[0].Body.Text != want.Text {
		t.Errorf("mail %+v, want %+v", got[0], want)
	}
	if l := logs.String(); !strings.Contains(l, `"notice mailed"`) || !strings.Contains(l, notifymail.Mask(to)) || strings.Contains(l, to) {
		t.Errorf("the mail's log line (the address masked): %s", l)
	}
	lone, _ := h.account(t)
	ep.AccountID = lone
	n, _ = notify.For(opevents.Recovered(ep, time.Now()), 0, "")
	if err := s.Send(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got := mails(to); len(got) != 1 {
		t.Errorf("an account without contacts made mail: %+v", got)
	}
}

// The deployed stack, with notifyEmailFrom (make localstack-deploy sets it:
// E2E_NOTIFY_EMAIL_FROM), mails the account's contacts when an endpoint
// starts failing and when it recovers: what failed, since when, and the
// recover call that gets the missed events back.
func TestNotificationEmailThroughSES(t *testing.T) {
	from := os.Getenv("E2E_NOTIFY_EMAIL_FROM")
	if remote() && from == "" {
		t.Fatal("E2E_NOTIFY_EMAIL_FROM is not set (make localstack-e2e sets it to the deploy's notifyEmailFrom)")
	}
	_, mails := localSES(t, from)
	h := start(t, opts{})
	acct, key := h.account(t)
	to := "oncall+" + strings.ToLower(acct) + "@acme.example"
	if code := h.call(t, key, "PUT", "/v1/account/notifications", `{"emails":["`+to+`"]}`, nil); code != 200 {
		t.Fatalf("PUT /v1/account/notifications: %d", code)
	}
	// 500 twice (the first a blip, the second sets failing_since), then 200.
	_, ep := h.registerReceiver(t, key, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n <= 2 {
			return 500, "down"
		}
		return 200, ""
	})
	ev := h.publish(t, key, payout)
	h.waitFor(t, key, ev.Deliveries[0].ID, time.Minute, func(d deliveryOut) bool { return d.Status == "delivered" })
	var got []sentMail
	for deadline := time.Now().Add(time.Minute); len(got) < 2 && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		got = mails(to)
	}
	if len(got) != 2 {
		t.Fatalf("%d mails to the contact, want 2 (failing, recovered): %+v", len(got), got)
	}
	slices.SortFunc(got, func(a, b sentMail) int { return strings.Compare(a.Subject, b.Subject) }) // "... is failing" before "... recovered"
	failing, recovered := got[0], got[1]
	if failing.Subject != "[gifq] Endpoint "+ep.ID+" is failing: "+ep.URL || !strings.Contains(failing.Body.Text, "Last answer:    HTTP 500") ||
		!strings.Contains(failing.Body.Text, "Failing since:") || !strings.Contains(failing.Body.Text, "POST /v1/endpoints/"+ep.ID+"/recover") {
		t.Errorf("failing mail: %s\n%s", failing.Subject, failing.Body.Text)
	}
	if recovered.Subject != "[gifq] Endpoint "+ep.ID+" recovered: "+ep.URL || !strings.Contains(recovered.Body.Text, "Recovered at:") ||
		!strings.Contains(recovered.Body.Text, `"until": `) {
		t.Errorf("recovered mail: %s\n%s", recovered.Subject, recovered.Body.Text)
	}
	for _, m := range got {
		if m.Source != from || !slices.Equal(m.Destination.ToAddresses, []string{to}) {
			t.Errorf("mail from %s to %v", m.Source, m.Destination.ToAddresses)
		}
	}
}
