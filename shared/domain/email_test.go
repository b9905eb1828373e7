package domain

import (
	"strings"
	"testing"
)

func TestCheckEmail(t *testing.T) {
	long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com" // 254 bytes
	for _, ok := range []string{"ops@example.com", "first.last+tag@sub.example.co.uk", long} {
		if err := CheckEmail(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ops", "ops@", "@example.com", "ops@localhost", "Ops <ops@example.com>", " ops@example.com",
		"ops@example.com\r\nBcc: x@example.com", "ops@.example.com", "ops@example.com.", "ops@[127.0.0.1]", "a,b@example.com", long + "m"} {
		if err := CheckEmail(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
