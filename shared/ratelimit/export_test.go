package ratelimit

import "time"

// Gathering is how many slots wait, gathered for the next write of the
// bookings of account at perSecond and lead.
func (l *Limiter) Gathering(account string, perSecond float64, lead time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln := l.lines[lineKey{account, perSecond, lead}]; ln != nil && ln.waiting != nil {
		return ln.waiting.n
	}
	return 0
}

// Held is how many tokens the limiter holds for keyID, taken ahead.
func (l *Limiter) Held(keyID string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.keys[keyID]; st != nil {
		return st.held(l.now().UnixMicro())
	}
	return 0
}
