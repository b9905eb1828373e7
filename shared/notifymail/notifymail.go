// Package notifymail tells an account's contacts by email (Amazon SES)
// what package notify tells its notification endpoint: an endpoint failing,
// about to be disabled, disabled by us or its receiver, or recovered, with what failed, since
// when and how to get the missed events back. Compose is the mail, a pure
// function of the notice; Sender sends it once per notice key (kind,
// endpoint, UTC day) to the account's notification_emails. Off unless the
// deployment names a verified sender (NOTIFY_EMAIL_FROM).
package notifymail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ses"
	"github.com/aws/aws-sdk-go-v2/service/ses/types"
	"github.com/aws/smithy-go"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/notify"
)

// Mail is one notice as an email.
type Mail struct {
	Subject, Text string
}

// Compose writes the mail of a notice: a subject naming the endpoint and
// what happened, and a plain-text body with the facts and the calls that
// get the missed events back.
func Compose(n notify.Notice) Mail {
	b := n.Body
	what := map[string]string{
		domain.SystemEndpointFailing:   "is failing",
		domain.SystemEndpointDisabling: "will be disabled",
		domain.SystemEndpointDisabled:  "was disabled",
		domain.SystemEndpointRecovered: "recovered",
	}[b.Event]
	var t strings.Builder
	line := func(label, v string) {
		if v != "" {
			fmt.Fprintf(&t, "%-15s %s\n", label+":", oneLine(v))
		}
	}
	t.WriteString(b.Message + "\n\n")
	line("Endpoint", b.Endpoint.ID)
	line("URL", b.Endpoint.URL)
	line("Failing since", b.FailingSince)
	if b.LastStatus != 0 {
		line("Last answer", fmt.Sprintf("HTTP %d", b.LastStatus))
	}
	line("Last error", b.LastError)
	line("Disabled at", b.DisabledAt)
	line("Reason", b.Reason)
	line("Recovered at", b.RecoveredAt)
	line("Disables at", b.DisablesAt)
	if b.DisablesAt != "" {
		t.WriteString("                (if it keeps failing until then)\n")
	}
	if b.Enable != nil {
		t.WriteString("\nTo enable it again:\n  " + call(b.Enable) + "\n")
	}
	if b.Recover != nil {
		t.WriteString("\nTo get the missed events back, once it answers:\n  " + call(b.Recover) + "\n")
	}
	if b.PortalURL != "" {
		t.WriteString("\nIn the portal: " + b.PortalURL + "\n")
	}
	t.WriteString("\nYou receive this as a notification contact of account " + n.AccountID +
		" (PUT /v1/account/notifications changes the list). At most one mail of a kind per endpoint per day.\n")
	return Mail{Subject: oneLine("[gifq] Endpoint " + b.Endpoint.ID + " " + what + ": " + b.Endpoint.URL), Text: t.String()}
}

// call is an API call as the customer would type it: METHOD /path {json}.
func call(c *notify.Call) string {
	s := c.Method + " " + c.Path
	if len(c.Body) == 0 {
		return s
	}
	// A stable order: since, until, then the rest by name.
	rank := map[string]int{"since": -2, "until": -1}
	keys := slices.Sorted(maps.Keys(c.Body))
	slices.SortStableFunc(keys, func(a, b string) int { return rank[a] - rank[b] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q: %s", k, jsonValue(c.Body[k]))
	}
	return s + " {" + strings.Join(parts, ", ") + "}"
}

func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// oneLine keeps a value on its line: no control character from a URL or
// a receiver's error reaches a header or starts a line of its own.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// Mask shows an address without the person: its first character and its
// domain (j***@example.com), for logs.
func Mask(addr string) string {
	local, domainPart, ok := strings.Cut(addr, "@")
	if !ok || local == "" {
		return "***"
	}
	return local[:1] + "***@" + domainPart
}

// SES is the one call the sender makes.
type SES interface {
	SendEmail(ctx context.Context, in *ses.SendEmailInput, opts ...func(*ses.Options)) (*ses.SendEmailOutput, error)
}

// Store is what the sender reads and writes (package store).
type Store interface {
	GetAccount(ctx context.Context, id string) (domain.Account, error)
	ClaimMail(ctx context.Context, noticeKey string, staleAfter time.Duration) (bool, error)
	MailSent(ctx context.Context, noticeKey string) error
}

// StaleClaim is how long a claim to send a mail holds before another
// sender may take it (its own sender died before sending): well above one
// SES call.
const StaleClaim = 2 * time.Minute

// Sender sends notices' mails through SES from From, a verified identity.
type Sender struct {
	SES   SES
	From  string
	Store Store
	Log   *slog.Logger // each mail sent, its addresses masked
}

// Send mails the notice to the account's notification addresses, once per
// notice key: nothing for an account without addresses, nothing when the
// mail of this kind, endpoint and day was sent. Its errors name no address.
func (s *Sender) Send(ctx context.Context, n notify.Notice) error {
	acct, err := s.Store.GetAccount(ctx, n.AccountID)
	if err != nil {
		return fmt.Errorf("read account: %w", err)
	}
	if len(acct.NotificationEmails) == 0 {
		return nil
	}
	ok, err := s.Store.ClaimMail(ctx, n.Key, StaleClaim)
	if err != nil || !ok {
		return err
	}
	m := Compose(n)
	out, err := s.SES.SendEmail(ctx, &ses.SendEmailInput{
		Source:      aws.String(s.From),
		Destination: &types.Destination{ToAddresses: acct.NotificationEmails},
		Message: &types.Message{
			Subject: &types.Content{Data: aws.String(m.Subject), Charset: aws.String("UTF-8")},
			Body:    &types.Body{Text: &types.Content{Data: aws.String(m.Text), Charset: aws.String("UTF-8")}},
		},
	})
	if err != nil {
		return sesError(err)
	}
	masked := make([]string, len(acct.NotificationEmails))
	for i, e := range acct.NotificationEmails {
		masked[i] = Mask(e)
	}
	if s.Log != nil {
		s.Log.InfoContext(ctx, "notice mailed", "account_id", n.AccountID, "endpoint_id", n.EndpointID,
			"event_type", n.Body.Event, "to", masked, "message_id", aws.ToString(out.MessageId))
	}
	return s.Store.MailSent(ctx, n.Key)
}

// sesError keeps an SES error's code only: its message may name the
// addresses it refused.
func sesError(err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		return fmt.Errorf("ses SendEmail: %s", api.ErrorCode())
	}
	return fmt.Errorf("ses SendEmail: %w", err)
}
