package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gifq/webhooks/shared/signing"
)

// A receiver using the Standard Webhooks reference library verifies every
// attempt, and dedupes on webhook-id: the same on the retry as on the first
// attempt. During a secret rotation the old and the new secret each verify.
func TestStandardWebhooksLibraryVerifiesEveryAttempt(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, ep := h.registerReceiver(t, key, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n == 1 {
			return 503, "busy"
		}
		return 200, "ok"
	})
	var rot struct {
		Secret string `json:"secret"`
	}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", nil, &rot); code != 200 {
		t.Fatalf("rotate: %d", code)
	}
	ev := h.publish(t, key, payout)
	dlv := ev.Deliveries[0].ID
	if d := h.waitFor(t, key, dlv, 30*time.Second, settled); d.Status != "delivered" || d.AttemptCount != 2 {
		t.Fatalf("delivery %+v", d)
	}
	got := rv.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	for i, r := range got {
		if id := r.header.Get(signing.HeaderWebhookID); id != dlv {
			t.Errorf("attempt %d: webhook-id %q, want the delivery id %s", i+1, id, dlv)
		}
		if n := len(strings.Fields(r.header.Get(signing.HeaderWebhookSignature))); n != 2 {
			t.Errorf("attempt %d: %d signatures during the rotation, want 2", i+1, n)
		}
		for _, secret := range []string{ep.Secret, rot.Secret} {
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(r.body, r.header); err != nil {
				t.Errorf("attempt %d: the reference library rejects it: %v", i+1, err)
			}
		}
	}
	if got[0].header.Get(signing.HeaderWebhookSignature) == got[1].header.Get(signing.HeaderWebhookSignature) {
		t.Error("the retry reused the first attempt's signature")
	}
}
