package signing_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/signing"
)

// A receiver reads the raw body, verifies it, and only then parses it.
func ExampleVerify() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // from POST /v1/endpoints
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		if err := signing.Verify(body, r.Header.Get(signing.Header), []string{secret}, signing.Options{}); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent) // store the body, process it later
	})

	body := `{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123"}}`
	for _, sig := range []string{
		signing.Sign([]string{secret}, time.Now(), []byte(body)),
		signing.Sign([]string{"whsec_someone_else"}, time.Now(), []byte(body)),
	} {
		req := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
		req.Header.Set(signing.Header, sig)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// 204
	// 401
}

// The same receiver on the Standard Webhooks headers: webhook-id is the
// delivery (deduplicate on it), and the secret is the same whsec_ string.
func ExampleVerifyStandard() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes after whsec_, base64
	verify := func(r *http.Request, body []byte) error {
		return signing.VerifyStandard(body, r.Header.Get(signing.HeaderWebhookID), r.Header.Get(signing.HeaderWebhookTimestamp),
			r.Header.Get(signing.HeaderWebhookSignature), []string{secret}, signing.Options{})
	}
	body := []byte(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123"}}`)
	now := time.Now()
	req := httptest.NewRequest(http.MethodPost, "/webhooks", nil)
	req.Header.Set(signing.HeaderWebhookID, "dlv_01M8NHFFVCQ2K0R6WZ5QH3J1XA")
	req.Header.Set(signing.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(signing.HeaderWebhookSignature, signing.SignStandard([]string{secret}, "dlv_01M8NHFFVCQ2K0R6WZ5QH3J1XA", now, body))
	fmt.Println(verify(req, body))
	fmt.Println(verify(req, append(body, ' ')))
	// Output:
	// <nil>
	// signing: no signature matches
}
