package keylimit

import "time"

// SetNow sets the limiter's clock, for tests.
func (lim *Limiter) SetNow(now func() time.Time) { lim.now = now }

// Held is how many tokens the limiter holds for keyID, taken ahead.
func (lim *Limiter) Held(keyID string) int {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if st := lim.keys[keyID]; st != nil {
		return st.held(lim.now().UnixMilli())
	}
	return 0
}
