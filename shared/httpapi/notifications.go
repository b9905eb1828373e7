package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gifq/webhooks/shared/domain"
)

// notificationsView is the account's notification contacts.
type notificationsView struct {
	Emails []string `json:"emails"`
}

// putNotifications: PUT /v1/account/notifications {"emails": [...]} sets
// the addresses told by email when one of the account's endpoints fails,
// is disabled or recovers (package notifymail); [] removes them. At most
// five plain addresses of at most 254 bytes; the same address twice (in
// any case) is kept once. A refusal is a 422 naming the entry and changes
// nothing.
func (a *API) putNotifications(ctx context.Context, req *request) response {
	var in struct {
		Emails *[]string `json:"emails"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	if in.Emails == nil {
		return fail(http.StatusUnprocessableEntity, "invalid_emails", "emails: required, a list of up to 5 addresses ([] removes them)")
	}
	emails, err := checkEmails(*in.Emails)
	if err != nil {
		return fail(http.StatusUnprocessableEntity, "invalid_emails", err.Error())
	}
	if err := a.Store.SetNotificationEmails(ctx, req.account, emails); err != nil {
		return a.internal(ctx, err)
	}
	return ok(http.StatusOK, notificationsView{Emails: emails})
}

// checkEmails validates a contact list and drops repeats (case-insensitive).
func checkEmails(list []string) ([]string, error) {
	if len(list) > domain.MaxNotificationEmails {
		return nil, fmt.Errorf("emails: at most %d addresses, got %d", domain.MaxNotificationEmails, len(list))
	}
	out := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		if err := domain.CheckEmail(e); err != nil {
			return nil, fmt.Errorf("emails[%d]: %v", i, err)
		}
		if k := strings.ToLower(e); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out, nil
}
