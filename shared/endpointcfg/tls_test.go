package endpointcfg

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

func selfSigned(t *testing.T) (certPEM, keyPEM string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "c"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}))
}

func TestApplyTLS(t *testing.T) {
	cert, key := selfSigned(t)
	otherCert, otherKey := selfSigned(t)
	next, err := Apply(domain.EndpointSettings{}, Change{TLS: &TLSChange{ClientCert: cert, ClientKey: key, CABundle: otherCert}}, 0)
	if err != nil || next.TLS == nil || next.TLS.KeyPEM != key {
		t.Fatalf("set: %v", err)
	}
	if v := ViewOf(next); v.TLS == nil || v.TLS.ClientKey != "****" || v.TLS.ClientCert != cert {
		t.Fatalf("view shows %+v", v.TLS)
	}
	if kept, err := Apply(next, Change{TLS: &TLSChange{ClientCert: cert}}, 0); err != nil || kept.TLS.KeyPEM != key || kept.TLS.CABundle != "" {
		t.Fatalf("keep the key for the same certificate: %v", err)
	}
	if reset, err := Apply(next, Change{Reset: []string{"tls"}}, 0); err != nil || reset.TLS != nil {
		t.Fatalf("reset: %v", err)
	}
	for field, c := range map[string]TLSChange{
		"tls.client_cert": {ClientCert: cert, ClientKey: otherKey}, // not its key
		"tls.client_key":  {ClientCert: otherCert},                 // a new certificate needs its key
		"tls.ca_bundle":   {CABundle: "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"},
		"tls":             {CABundle: strings.Repeat("x", MaxTLSCABundle+1)},
	} {
		if _, err := Apply(next, Change{TLS: &c}, 0); err == nil || err.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

// A change of another setting keeps the credentials.
func TestApplyKeepsOAuth2AndTLS(t *testing.T) {
	cur := domain.EndpointSettings{OAuth2: &domain.OAuth2{ClientID: "c"}, TLS: &domain.ClientTLS{CABundle: "x"}}
	next, err := Apply(cur, Change{TimeoutSeconds: new(5.0)}, 0)
	if err != nil || next.OAuth2 != cur.OAuth2 || next.TLS != cur.TLS {
		t.Fatalf("%+v %v", next, err)
	}
}
