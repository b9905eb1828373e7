package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// profileDuring starts a CPU profile of make dev (through its
// GIFQ_PPROF_ADDR) as the events start and returns a func that waits for it
// and writes it to o.profileOut. net/http/pprof takes a fixed length, so the
// profile covers the first -pprof-seconds of the run (15 s: the busy part of
// an unpaced 2,000-event run).
func profileDuring(o options) func() error {
	if o.profile == "" {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		c := &http.Client{Timeout: time.Minute}
		resp, err := c.Get("http://" + o.profile + "/debug/pprof/profile?seconds=" + fmt.Sprint(o.profileSeconds))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("pprof: HTTP %d", resp.StatusCode)
			return
		}
		f, err := os.Create(o.profileOut)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return func() error { return <-done }
}
