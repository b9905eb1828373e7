package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// servePprof serves Go's profiles of the whole make dev process (API bridge,
// ingest, pollers, workers) on addr, a loopback address, when
// GIFQ_PPROF_ADDR names one:
//
//	GIFQ_PPROF_ADDR=127.0.0.1:6060 make dev
//	go tool pprof -top 'http://127.0.0.1:6060/debug/pprof/profile?seconds=20'   # while make load runs
func servePprof(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("GIFQ_PPROF_ADDR=%q: want a loopback host:port", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	go http.Serve(ln, mux)
	fmt.Fprintf(os.Stderr, "pprof on http://%s/debug/pprof/\n", addr)
	return nil
}
