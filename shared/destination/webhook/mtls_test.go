package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// clientCert makes a CA and a client certificate it signed: the CA's pool,
// and the certificate and key as PEM.
func clientCert(t *testing.T) (*x509.CertPool, string, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "receiver CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "gifq-webhooks"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage: x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

func TestMutualTLSPresentsTheEndpointsCertificate(t *testing.T) {
	pool, certPEM, keyPEM := clientCert(t)
	var subjects []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		subjects = append(subjects, r.TLS.PeerCertificates[0].Subject.CommonName)
		w.WriteHeader(204)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	// The receiver's certificate is private: trusted through the CA bundle.
	caBundle := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	s := local(2 * time.Second)
	r := req(srv.URL)
	r.EndpointID = "ep_1"
	if out := s.Send(context.Background(), r); out.Verdict != destination.Retry || out.Class != ErrTLS {
		t.Fatalf("without the CA bundle and certificate: %+v", out)
	}
	r.TLS = &domain.ClientTLS{CABundle: caBundle}
	if out := s.Send(context.Background(), r); out.Verdict == destination.Delivered {
		t.Fatalf("delivered without a client certificate: %+v", out)
	}
	r.TLS = &domain.ClientTLS{CertPEM: certPEM, KeyPEM: keyPEM, CABundle: caBundle}
	for range 3 {
		if out := s.Send(context.Background(), r); out.Verdict != destination.Delivered {
			t.Fatalf("with the client certificate: %+v", out)
		}
	}
	if len(subjects) != 3 || subjects[0] != "gifq-webhooks" {
		t.Fatalf("receiver saw client certificates %v", subjects)
	}
	if len(s.tlsBy) != 2 {
		t.Fatalf("%d TLS clients cached for 2 configs, want one each", len(s.tlsBy))
	}
}
