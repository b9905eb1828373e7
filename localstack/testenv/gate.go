package testenv

import "sync/atomic"

// Gate holds one call in flight for a test: a client wrapper calls Pass
// before passing a call on, and once the gate is armed the first call to
// pass is held, Entered is closed, and the call goes on when Open is called.
type Gate struct {
	armed   atomic.Bool
	Entered chan struct{}
	release chan struct{}
}

// NewGate returns a gate, not armed.
func NewGate() *Gate { return &Gate{Entered: make(chan struct{}), release: make(chan struct{})} }

// Arm makes the next call to Pass the one held.
func (g *Gate) Arm() { g.armed.Store(true) }

// Pass holds the call that makes it once the gate is armed, until Open.
func (g *Gate) Pass() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.Entered)
		<-g.release
	}
}

// Open lets the held call go on.
func (g *Gate) Open() { close(g.release) }
