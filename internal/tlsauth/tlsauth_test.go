package tlsauth_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reportdb"
	"reportdb/internal/tlsauth"
	"reportdb/internal/tlsauth/tlstest"
)

// serve starts an HTTPS server with a's TLS config, its allowlist
// middleware and a handler that counts the requests reaching it (and reads
// their bodies).
func serve(t *testing.T, a *tlsauth.Auth) (url string, reached *atomic.Int64) {
	t.Helper()
	reached = new(atomic.Int64)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok "+tlsauth.ClientCN(r))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// refuse stands for the API's error mapping: a forbidden client is a 403
	// with the error's text
	refuse := func(w http.ResponseWriter, r *http.Request, err error) {
		var e *reportdb.Error
		if !errors.As(err, &e) || e.Code != reportdb.EFORBIDDEN {
			t.Errorf("refused with %v, want a reportdb.EFORBIDDEN error", err)
		}
		w.Header().Set("Content-Type", "text/plain;charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, err.Error())
	}
	srv := &http.Server{Handler: a.Middleware(h, refuse), TLSConfig: a.TLSConfig(), ErrorLog: nil}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String(), reached
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newAuth(t *testing.T, crl, allowlist string, reload time.Duration) *tlsauth.Auth {
	t.Helper()
	a, err := tlsauth.New(tlsauth.Options{
		CertFile: tlstest.File(t, "server.pem"), KeyFile: tlstest.File(t, "server_key.pem"),
		CAFile: tlstest.File(t, "ca.pem"), CRLFile: crl, AllowlistFile: allowlist,
		ReloadInterval: reload, Log: quietLog(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func get(t *testing.T, c *http.Client, url string) (int, string, error) {
	t.Helper()
	resp, err := c.Post(url+"/pdb/cmd/v1", "application/json", strings.NewReader(`{"certname":"x"}`))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestClientCertificates(t *testing.T) {
	ca := tlstest.TestCA(t)
	revoked := ca.Issue(t, "revoked.clients.test")
	good := ca.Issue(t, "good.clients.test")
	dir := t.TempDir()
	crl := tlstest.WriteFile(t, dir, "crl.pem", ca.CRL(t, revoked.Cert))
	a := newAuth(t, crl, "", -1)
	url, reached := serve(t, a)

	other := tlstest.NewCA(t, "Some other CA").Issue(t, "puppet-client.clients.test")
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"test PKI client", []tls.Certificate{tlstest.TestClientCert(t)}, true},
		{"client issued by the CA", []tls.Certificate{good.TLS}, true},
		{"no client certificate", nil, false},
		{"certificate from another CA", []tls.Certificate{other.TLS}, false},
		{"revoked certificate", []tls.Certificate{revoked.TLS}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			status, body, err := get(t, tlstest.Client(t, tc.certs...), url)
			if tc.ok {
				if err != nil || status != 200 {
					t.Fatalf("want 200, got %d %q %v", status, body, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want a failed handshake, got %d %q", status, body)
			}
			t.Logf("refused: %v", err)
			if reached.Load() != before {
				t.Fatal("the refused request reached the handler")
			}
		})
	}
}

func TestAllowlist(t *testing.T) {
	ca := tlstest.TestCA(t)
	listed := ca.Issue(t, "puppet.example.test")
	dir := t.TempDir()
	allow := tlstest.WriteFile(t, dir, "allowlist", []byte("# Puppet servers\n\n  puppet.example.test  \n"))
	a := newAuth(t, "", allow, -1)
	url, reached := serve(t, a)

	status, body, err := get(t, tlstest.Client(t, listed.TLS), url)
	if err != nil || status != 200 || body != "ok puppet.example.test" {
		t.Fatalf("listed client: %d %q %v", status, body, err)
	}
	n := reached.Load()
	c := tlstest.Client(t, tlstest.TestClientCert(t))
	for _, method := range []string{"POST", "GET", "PUT"} {
		req, _ := http.NewRequest(method, url+"/pdb/query/v4/reports", strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
			!strings.Contains(string(b), "puppet-client.clients.test doesn't appear in the certificate allowlist") {
			t.Fatalf("%s by an unlisted client: %d %q %q", method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	if reached.Load() != n {
		t.Fatal("requests of an unlisted client reached the handler")
	}
}

// TestReload: an edited allowlist and a new CRL take effect without a
// restart; a broken file keeps the previous one in force.
func TestReload(t *testing.T) {
	ca := tlstest.TestCA(t)
	dir := t.TempDir()
	allow := tlstest.WriteFile(t, dir, "allowlist", []byte("someone.else\n"))
	crl := tlstest.WriteFile(t, dir, "crl.pem", ca.CRL(t))
	a := newAuth(t, crl, allow, 10*time.Millisecond)
	url, _ := serve(t, a)
	client := tlstest.TestClientCert(t)

	if status, _, err := get(t, tlstest.Client(t, client), url); err != nil || status != 403 {
		t.Fatalf("before: %d %v", status, err)
	}
	bump := 0
	touch := func(path string, data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// a distinct modification time even on coarse file systems
		bump++
		future := time.Now().Add(time.Duration(bump) * time.Hour)
		os.Chtimes(path, future, future)
	}
	touch(allow, []byte("someone.else\npuppet-client.clients.test\n"))
	waitFor(t, func() bool {
		status, _, err := get(t, tlstest.Client(t, client), url)
		return err == nil && status == 200
	})

	// a broken allowlist keeps the previous list
	os.Remove(allow)
	time.Sleep(30 * time.Millisecond)
	if err := a.Reload(); err == nil {
		t.Fatal("reloading a missing allowlist succeeded")
	}
	if !a.Allowed("puppet-client.clients.test") {
		t.Fatal("a failed reload dropped the previous allowlist")
	}
	touch(allow, []byte("puppet-client.clients.test\n"))

	// revoke the client certificate: new connections are refused
	cert, err := tls.LoadX509KeyPair(tlstest.File(t, "client.pem"), tlstest.File(t, "client_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	touch(crl, ca.CRL(t, leaf))
	waitFor(t, func() bool {
		_, _, err := get(t, tlstest.Client(t, client), url)
		return err != nil
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	other := tlstest.NewCA(t, "Other CA")
	foreignCRL := tlstest.WriteFile(t, dir, "foreign-crl.pem", other.CRL(t))
	notPEM := tlstest.WriteFile(t, dir, "junk.pem", []byte("not pem"))
	base := tlsauth.Options{CertFile: tlstest.File(t, "server.pem"), KeyFile: tlstest.File(t, "server_key.pem"),
		CAFile: tlstest.File(t, "ca.pem"), Log: quietLog()}
	for name, mod := range map[string]func(*tlsauth.Options){
		"CRL of another CA": func(o *tlsauth.Options) { o.CRLFile = foreignCRL },
		"CRL not PEM":       func(o *tlsauth.Options) { o.CRLFile = notPEM },
		"CA not PEM":        func(o *tlsauth.Options) { o.CAFile = notPEM },
		"missing key":       func(o *tlsauth.Options) { o.KeyFile = dir + "/nope.pem" },
		"missing allowlist": func(o *tlsauth.Options) { o.AllowlistFile = dir + "/nope" },
		"no CA":             func(o *tlsauth.Options) { o.CAFile = "" },
	} {
		o := base
		mod(&o)
		if _, err := tlsauth.New(o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// the shared PKI's (empty) CRL is fine
	o := base
	o.CRLFile = tlstest.File(t, "crl.pem")
	if _, err := tlsauth.New(o); err != nil {
		t.Errorf("test PKI CRL: %v", err)
	}
}
