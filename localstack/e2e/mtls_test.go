package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A receiver that requires a client certificate from its own CA, behind a
// private server certificate: deliveries present the endpoint's certificate
// and trust its CA bundle; the key is in the table only sealed.
func TestMutualTLSToReceivers(t *testing.T) {
	h := start(t, opts{kms: true})
	_, key := h.account(t)

	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "receiver client CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	cliKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cliDER, _ := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "gifq-e2e"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}, ca, &cliKey.PublicKey, caKey)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(cliKey)
	certPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cliDER}))
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	var got atomic.Int32
	// The receiver's own, private server certificate, for the host the
	// stack reaches it at; the CA bundle the endpoint trusts is that one.
	ln, hostPort := h.listen(t)
	host, _, _ := net.SplitHostPort(hostPort)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: host}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	if ip := net.ParseIP(host); ip != nil {
		srvTmpl.IPAddresses = []net.IP{ip}
	} else {
		srvTmpl.DNSNames = []string{host}
	}
	srvDER, _ := x509.CreateCertificate(rand.Reader, srvTmpl, srvTmpl, &srvKey.PublicKey, srvKey)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "gifq-e2e" {
			w.WriteHeader(401)
			return
		}
		got.Add(1)
		w.WriteHeader(204)
	}), TLSConfig: &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
		Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}}}}
	go srv.ServeTLS(ln, "", "")
	defer srv.Close()
	srvURL := "https://" + hostPort
	caBundle := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}))

	// A key that is not the certificate's is refused.
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	d, _ := x509.MarshalPKCS8PrivateKey(k)
	otherKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: d}))
	var e struct {
		Error struct{ Code, Message string }
	}
	if st := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": srvURL + "/hook",
		"settings": map[string]any{"tls": map[string]any{"client_cert": certPEM, "client_key": otherKey}}}, &e); st != 422 || e.Error.Code != "invalid_settings" {
		t.Fatalf("mismatched key: %d %+v", st, e)
	}

	var ep struct {
		ID       string
		Settings struct{ TLS map[string]string }
	}
	if st := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": srvURL + "/hook",
		"settings": map[string]any{"tls": map[string]any{"client_cert": certPEM, "client_key": keyPEM, "ca_bundle": caBundle}}}, &ep); st != 201 {
		t.Fatalf("register: %d", st)
	}
	if ep.Settings.TLS["client_key"] != "****" {
		t.Fatalf("the answer shows the key as %q", ep.Settings.TLS["client_key"])
	}
	var ids []string
	for range 3 {
		ids = append(ids, h.publish(t, key, payout).Deliveries[0].ID)
	}
	for _, id := range ids {
		if d := h.waitFor(t, key, id, 30*time.Second, settled); d.Status != "delivered" {
			t.Fatalf("delivery %s: %+v", id, d)
		}
	}
	if got.Load() != 3 {
		t.Fatalf("receiver took %d requests with the client certificate, want 3", got.Load())
	}
	raw := h.endpointItem(t, ep.ID)
	keyBody := strings.Split(keyPEM, "\n")[1]
	if strings.Contains(raw, keyBody) || !strings.Contains(raw, "sealed_key") {
		t.Fatal("the table holds the TLS client key in plain text (or no sealed key)")
	}
}
