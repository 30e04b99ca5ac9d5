// Package tlstest builds the certificates TLS tests need: it loads the test
// PKI in testdata/pki (a copy of the clients' throw-away PKI) and signs
// extra client certificates, other CAs and CRLs with crypto/x509, so tests
// never depend on openssl.
package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// PKIDir returns the absolute path of testdata/pki (found by walking up
// from the working directory to go.mod).
func PKIDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "pki")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// File returns the path of a file of the test PKI (e.g. "ca.pem").
func File(t testing.TB, name string) string {
	return filepath.Join(PKIDir(t), name)
}

// CA is a certificate authority that can issue certificates and CRLs.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// PEM returns the CA certificate in PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// TestCA loads the test PKI's CA (testdata/pki/ca.pem + ca_key.pem).
func TestCA(t testing.TB) *CA {
	t.Helper()
	certPEM, err := os.ReadFile(File(t, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(File(t, "ca_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		t.Fatal("test CA: bad PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
			t.Fatal("test CA key:", err)
		}
	}
	return &CA{Cert: cert, Key: key.(crypto.Signer)}
}

var serial atomic.Int64

func nextSerial() *big.Int {
	// far above the serials openssl gave the test PKI's certificates
	return big.NewInt(time.Now().UnixNano()/1000 + serial.Add(1))
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// NewCA creates a self-signed CA (one that reportdb does not trust).
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key}
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
	TLS     tls.Certificate
}

// Issue signs a client certificate for cn.
func (ca *CA) Issue(t testing.TB, cn string) *Leaf {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     []string{cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := &Leaf{
		Cert:    cert,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
	}
	if l.TLS, err = tls.X509KeyPair(l.CertPEM, l.KeyPEM); err != nil {
		t.Fatal(err)
	}
	return l
}

// CRL returns a PEM CRL of ca revoking the given certificates.
func (ca *CA) CRL(t testing.TB, revoked ...*x509.Certificate) []byte {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, c := range revoked {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: c.SerialNumber, RevocationTime: time.Now().Add(-time.Minute)})
	}
	tmpl := &x509.RevocationList{
		Number:                    nextSerial(),
		ThisUpdate:                time.Now().Add(-time.Hour),
		NextUpdate:                time.Now().Add(24 * time.Hour),
		RevokedCertificateEntries: entries,
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

// TestClientCert returns the test PKI's client certificate (CN
// puppet-client.clients.test).
func TestClientCert(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(File(t, "client.pem"), File(t, "client_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Client returns an HTTPS client that trusts the test CA and presents the
// given certificate (none: no client certificate) whatever CAs the server
// asks for, so that the server's own verification is what refuses a
// certificate of another CA. Connections are not reused between requests.
func Client(t testing.TB, certs ...tls.Certificate) *http.Client {
	t.Helper()
	return &http.Client{Timeout: 30 * time.Second, Transport: Transport(t, certs...)}
}

// Transport is Client's transport.
func Transport(t testing.TB, certs ...tls.Certificate) *http.Transport {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(TestCA(t).Cert)
	cfg := &tls.Config{RootCAs: pool}
	if len(certs) > 0 {
		cert := certs[0]
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	return &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}
}

// WriteFile writes data to dir/name and returns the path.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
