// Package tlsauth is reportdb's HTTPS listener security, as PuppetDB's
// jetty does it on its SSL port: a server certificate, client certificates
// required and verified against the Puppet CA (tls.RequireAndVerifyClientCert),
// certificates revoked by the CA's CRL refused during the handshake, and an
// optional certificate allowlist (PuppetDB's certificate-allowlist): a client
// whose certificate CN is not listed gets 403 before anything it sent is
// read.
//
// All files are re-read when they change (their modification time or size
// is checked at most once per ReloadInterval, on the handshake and request
// path), so a renewed server certificate, a new CRL or an edited allowlist
// take effect without a restart. A file that fails to load keeps the
// previous version in force (and is logged).
package tlsauth

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reportdb"
)

// Options configure an Auth.
type Options struct {
	// CertFile and KeyFile are the server's certificate (PEM, optionally
	// followed by intermediates) and private key.
	CertFile, KeyFile string
	// CAFile holds the CA certificate(s) that sign client certificates
	// (the Puppet CA).
	CAFile string
	// CRLFile, when set, holds PEM CRLs; certificates they revoke are
	// refused. Each CRL must be signed by a certificate in CAFile.
	CRLFile string
	// AllowlistFile, when set, lists the certnames (certificate CNs)
	// allowed to use the TLS listener, one per line; blank lines and lines
	// starting with # are ignored.
	AllowlistFile string
	// ReloadInterval is how often the files are checked for changes
	// (default 5s; negative: never).
	ReloadInterval time.Duration
	// Log receives reload messages and refusals (default slog.Default()).
	Log *slog.Logger
}

// Auth holds the current certificates, CRL and allowlist.
type Auth struct {
	opts      Options
	state     atomic.Pointer[state]
	lastCheck atomic.Int64 // unix nanoseconds of the last change check
	mu        sync.Mutex   // serialises reloads
}

type state struct {
	cert    *tls.Certificate
	cas     []*x509.Certificate
	pool    *x509.CertPool
	revoked map[string]map[string]bool // issuer (raw DER) → serial (decimal) → revoked
	allow   map[string]bool            // nil: no allowlist
	cfg     *tls.Config
	stamps  map[string]fileStamp // what was loaded, by path
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// New loads every configured file; any error is fatal here (at start-up),
// unlike on reloads.
func New(opts Options) (*Auth, error) {
	if opts.CertFile == "" || opts.KeyFile == "" || opts.CAFile == "" {
		return nil, errors.New("TLS needs a certificate, its key and the CA that signs client certificates")
	}
	if opts.ReloadInterval == 0 {
		opts.ReloadInterval = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	a := &Auth{opts: opts}
	st, err := a.load()
	if err != nil {
		return nil, err
	}
	a.state.Store(st)
	a.lastCheck.Store(time.Now().UnixNano())
	return a, nil
}

// TLSConfig returns the server configuration to use on the listener.
// Every handshake picks up the current certificates (GetConfigForClient).
func (a *Auth) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			a.MaybeReload()
			return a.state.Load().cfg, nil
		},
	}
}

// Allowed says whether the certname may use the listener (always true
// without an allowlist).
func (a *Auth) Allowed(cn string) bool {
	allow := a.state.Load().allow
	return allow == nil || allow[cn]
}

// ClientCN returns the CN of the request's client certificate ("" on plain
// HTTP or without a certificate).
func ClientCN(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return ""
	}
	return r.TLS.PeerCertificates[0].Subject.CommonName
}

// refusedDrainBytes is how much of a refused request's body is read
// (and discarded) before the refusal is sent.
const refusedDrainBytes = 1 << 20

// Middleware enforces the allowlist on requests that came over TLS: a
// client whose certificate CN is not listed is refused with a
// reportdb.EFORBIDDEN error (403 with a text/plain explanation, written by
// refuse: the API's error mapping), and at most refusedDrainBytes of its
// request body are read, to be discarded.
// Plain-HTTP requests pass, as with PuppetDB (its allowlist applies to the
// SSL port).
func (a *Auth) Middleware(next http.Handler, refuse func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			a.MaybeReload()
			if cn := ClientCN(r); !a.Allowed(cn) {
				a.opts.Log.Warn("client certificate not in the certificate allowlist", "cn", cn,
					"allowlist", a.opts.AllowlistFile, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
				// do not keep reading a body we refuse, but read what a
				// report usually is first: closing with unread data in the
				// socket resets the connection, and the client, still
				// sending, would see the reset instead of this answer
				io.Copy(io.Discard, io.LimitReader(r.Body, refusedDrainBytes))
				w.Header().Set("Connection", "close")
				refuse(w, r, reportdb.Errorf(reportdb.EFORBIDDEN, "The client certificate name %s doesn't appear in the certificate allowlist. "+
					"Is your Puppet server's (or other PuppetDB client's) certname listed in reportdb's cert-allowlist file?", cn))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// MaybeReload re-reads changed files if ReloadInterval has passed since the
// last check. It is cheap when nothing is due (one atomic load).
func (a *Auth) MaybeReload() {
	if a.opts.ReloadInterval < 0 {
		return
	}
	now := time.Now().UnixNano()
	last := a.lastCheck.Load()
	if now-last < int64(a.opts.ReloadInterval) || !a.lastCheck.CompareAndSwap(last, now) {
		return
	}
	a.Reload()
}

// Reload re-reads the files that changed since they were loaded. On error
// the previous state stays in force.
func (a *Auth) Reload() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.state.Load()
	changed := false
	for _, p := range a.paths() {
		if st, err := stat(p); err != nil || st != old.stamps[p] {
			changed = true
			break
		}
	}
	if !changed {
		return nil
	}
	st, err := a.load()
	if err != nil {
		a.opts.Log.Error("TLS files changed but cannot be loaded; keeping the previous ones", "err", err)
		return err
	}
	a.state.Store(st)
	a.opts.Log.Info("TLS files reloaded", "allowlist_entries", len(st.allow), "revoked_serials", countRevoked(st.revoked))
	return nil
}

func countRevoked(m map[string]map[string]bool) int {
	n := 0
	for _, s := range m {
		n += len(s)
	}
	return n
}

func (a *Auth) paths() []string {
	ps := []string{a.opts.CertFile, a.opts.KeyFile, a.opts.CAFile}
	if a.opts.CRLFile != "" {
		ps = append(ps, a.opts.CRLFile)
	}
	if a.opts.AllowlistFile != "" {
		ps = append(ps, a.opts.AllowlistFile)
	}
	return ps
}

func stat(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}

// load reads every file into a new state. The stamps are taken before
// reading, so a file written during the read is read again next time.
func (a *Auth) load() (*state, error) {
	o := a.opts
	st := &state{stamps: map[string]fileStamp{}}
	for _, p := range a.paths() {
		s, err := stat(p)
		if err != nil {
			return nil, err
		}
		st.stamps[p] = s
	}
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s / key %s: %w", o.CertFile, o.KeyFile, err)
	}
	st.cert = &cert
	if st.cas, err = readCerts(o.CAFile); err != nil {
		return nil, err
	}
	st.pool = x509.NewCertPool()
	for _, c := range st.cas {
		st.pool.AddCert(c)
	}
	if o.CRLFile != "" {
		if st.revoked, err = readCRLs(o.CRLFile, st.cas, o.Log); err != nil {
			return nil, err
		}
	}
	if o.AllowlistFile != "" {
		if st.allow, err = readAllowlist(o.AllowlistFile); err != nil {
			return nil, err
		}
	}
	st.cfg = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    st.pool,
		// VerifyConnection runs on every handshake, resumed ones included
		// (VerifyPeerCertificate does not), so a revoked certificate
		// cannot come back through a session ticket.
		VerifyConnection: func(cs tls.ConnectionState) error { return st.checkRevoked(cs) },
	}
	return st, nil
}

// checkRevoked refuses a connection whose client certificate (or an
// intermediate of its chain) is on a CRL.
func (st *state) checkRevoked(cs tls.ConnectionState) error {
	if len(st.revoked) == 0 {
		return nil
	}
	certs := cs.PeerCertificates
	if len(cs.VerifiedChains) > 0 {
		certs = cs.VerifiedChains[0]
	}
	for _, c := range certs {
		if serials := st.revoked[string(c.RawIssuer)]; serials != nil && serials[c.SerialNumber.String()] {
			return fmt.Errorf("certificate %q (serial %s) has been revoked", c.Subject.CommonName, c.SerialNumber)
		}
	}
	return nil
}

func readPEM(path string) ([]*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var blocks []*pem.Block
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: no PEM data", path)
	}
	return blocks, nil
}

func readCerts(path string) ([]*x509.Certificate, error) {
	blocks, err := readPEM(path)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w", err)
	}
	var certs []*x509.Certificate
	for _, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("CA certificate in %s: %w", path, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s holds no certificate", path)
	}
	return certs, nil
}

// readCRLs parses the CRLs in path; each must be signed by one of cas.
func readCRLs(path string, cas []*x509.Certificate, log *slog.Logger) (map[string]map[string]bool, error) {
	blocks, err := readPEM(path)
	if err != nil {
		return nil, fmt.Errorf("CRL: %w", err)
	}
	revoked := map[string]map[string]bool{}
	n := 0
	for _, b := range blocks {
		if b.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("CRL in %s: %w", path, err)
		}
		var issuer *x509.Certificate
		for _, ca := range cas {
			if bytes.Equal(ca.RawSubject, crl.RawIssuer) && crl.CheckSignatureFrom(ca) == nil {
				issuer = ca
				break
			}
		}
		if issuer == nil {
			return nil, fmt.Errorf("CRL in %s (issuer %q) is not signed by a CA of the TLS CA file", path, crl.Issuer.String())
		}
		if !crl.NextUpdate.IsZero() && time.Now().After(crl.NextUpdate) {
			log.Warn("CRL is past its next update; using it anyway", "file", path, "next_update", crl.NextUpdate)
		}
		set := revoked[string(crl.RawIssuer)]
		if set == nil {
			set = map[string]bool{}
			revoked[string(crl.RawIssuer)] = set
		}
		for _, e := range crl.RevokedCertificateEntries {
			set[e.SerialNumber.String()] = true
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no X509 CRL", path)
	}
	return revoked, nil
}

// readAllowlist reads one certname per line (surrounding blanks trimmed;
// blank lines and # comments ignored).
func readAllowlist(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("certificate allowlist: %w", err)
	}
	allow := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		allow[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("certificate allowlist %s: %w", path, err)
	}
	return allow, nil
}
