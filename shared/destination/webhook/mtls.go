package webhook

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
)

// maxTLSClients bounds the per-endpoint clients a warm instance keeps.
const maxTLSClients = 1000

// clientFor is the client of r's endpoint: the shared one, or, for an
// endpoint with mutual TLS or its own CA bundle, its own transport (a
// clone of the shared one, with the same dial guard), built once per warm
// instance and config.
func (s *Sender) clientFor(r Request) (*http.Client, error) {
	t := r.TLS
	if t == nil {
		return s.client, nil
	}
	h := sha256.New()
	for _, f := range []string{t.CertPEM, t.KeyPEM, t.CABundle} {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	key := r.EndpointID + "/" + hex.EncodeToString(h.Sum(nil))
	s.tlsMu.Lock()
	defer s.tlsMu.Unlock()
	if c := s.tlsBy[key]; c != nil {
		return c, nil
	}
	cfg := s.base.TLSClientConfig.Clone()
	if t.CertPEM != "" {
		pair, err := tls.X509KeyPair([]byte(t.CertPEM), []byte(t.KeyPEM))
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.CABundle != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(t.CABundle)) {
			return nil, errors.New("no certificate in the CA bundle")
		}
		cfg.RootCAs = pool
	}
	if len(s.tlsBy) >= maxTLSClients {
		for k, c := range s.tlsBy {
			c.CloseIdleConnections()
			delete(s.tlsBy, k)
		}
	}
	tr := s.base.Clone()
	tr.TLSClientConfig = cfg
	tr.MaxIdleConnsPerHost = 4
	c := newClient(tr, s.timeout)
	s.tlsBy[key] = c
	return c, nil
}
