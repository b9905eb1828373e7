package signing_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
