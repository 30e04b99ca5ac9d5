package upstream_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"reportdb/internal/tlsauth/tlstest"
	"reportdb/upstream"
)

// An https upstream that, as PuppetDB's 8081, requires a client
// certificate of its CA: reached with upstream-tls-cert/key/ca, refused
// (ErrUnavailable) without the certificate or without the CA.
func TestTLSClientCertificate(t *testing.T) {
	ca, err := os.ReadFile(tlstest.File(t, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	serverCert, err := tls.LoadX509KeyPair(tlstest.File(t, "server.pem"), tlstest.File(t, "server_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Records", "3")
		w.Write([]byte(`[{"cn":"` + r.TLS.PeerCertificates[0].Subject.CommonName + `","path":"` + r.URL.Path + `"}]`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	good, err := upstream.New(upstream.Options{URL: url, CertFile: tlstest.File(t, "client.pem"),
		KeyFile: tlstest.File(t, "client_key.pem"), CAFile: tlstest.File(t, "ca.pem")})
	if err != nil {
		t.Fatal(err)
	}
	body, err := good.Query(context.Background(), "/pdb/query/v4/facts", `["=","name","os"]`)
	if err != nil || !strings.Contains(string(body), `"path":"/pdb/query/v4/facts"`) {
		t.Fatalf("query with the client certificate: %s %v", body, err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/pdb/query/v4/inventory?limit=1", nil)
	if err := good.Forward(rec, req, nil); err != nil || rec.Code != 200 || rec.Header().Get("X-Records") != "3" ||
		!strings.Contains(rec.Body.String(), `"path":"/pdb/query/v4/inventory"`) {
		t.Fatalf("forward: %v %d %v %s", err, rec.Code, rec.Header(), rec.Body)
	}

	noCert, _ := upstream.New(upstream.Options{URL: url, CAFile: tlstest.File(t, "ca.pem")})
	if _, err := noCert.Query(context.Background(), "/pdb/query/v4/facts", "[]"); !errors.Is(err, upstream.ErrUnavailable) {
		t.Fatalf("without a client certificate: %v", err)
	}
	noCA, _ := upstream.New(upstream.Options{URL: url, CertFile: tlstest.File(t, "client.pem"), KeyFile: tlstest.File(t, "client_key.pem")})
	if _, err := noCA.Query(context.Background(), "/pdb/query/v4/facts", "[]"); !errors.Is(err, upstream.ErrUnavailable) {
		t.Fatalf("without the upstream's CA: %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []upstream.Options{{URL: "ftp://x"}, {URL: "http://"}, {URL: "http://x?y=1"},
		{URL: "https://x", CertFile: "a.pem"}, {URL: "https://x", CAFile: "/nonexistent"}} {
		if _, err := upstream.New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
