package domain

import (
	"regexp"
	"strings"
	"testing"
)

// The pattern's length bound is MaxEventTypeLength.
func TestEventTypePatternLength(t *testing.T) {
	re := regexp.MustCompile(`^` + EventTypePattern + `$`)
	if !re.MatchString(strings.Repeat("a", MaxEventTypeLength)) {
		t.Errorf("a type of %d characters does not match", MaxEventTypeLength)
	}
	if re.MatchString(strings.Repeat("a", MaxEventTypeLength+1)) {
		t.Errorf("a type of %d characters matches", MaxEventTypeLength+1)
	}
}
