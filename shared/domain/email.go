package domain

import (
	"errors"
	"net/mail"
	"strings"
)

// An account's notification contacts (PUT /v1/account/notifications): at
// most this many addresses of at most this many bytes each (RFC 5321's
// path limit).
const (
	MaxNotificationEmails = 5
	MaxEmailBytes         = 254
)

// CheckEmail accepts a plain address (no display name, no comment) of at
// most MaxEmailBytes, with a local part and a dotted domain.
func CheckEmail(addr string) error {
	if len(addr) > MaxEmailBytes {
		return errors.New("longer than 254 bytes")
	}
	a, err := mail.ParseAddress(addr)
	if err != nil || a.Address != addr || a.Name != "" {
		return errors.New("not a plain email address like ops@example.com")
	}
	i := strings.LastIndexByte(addr, '@') // ParseAddress found one
	if local, host := addr[:i], addr[i+1:]; local == "" || !strings.Contains(host, ".") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") ||
		strings.HasPrefix(host, "[") {
		return errors.New("not a plain email address like ops@example.com")
	}
	return nil
}
