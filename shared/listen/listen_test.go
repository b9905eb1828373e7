package listen

import "testing"

// The listener signs with a real secret: it forwards only to this machine.
func TestCheckForward(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://localhost:3000/webhooks": true, "http://127.0.0.1:8000/h": true, "https://[::1]:8443/h": true,
		"http://example.com/h": false, "http://10.0.0.1/h": false, "ftp://localhost/h": false, "localhost:3000": false,
		"http://localhost.example.com/h": false, "": false,
	} {
		if got := CheckForward(raw) == nil; got != want {
			t.Errorf("%q: accepted %v, want %v", raw, got, want)
		}
	}
}
