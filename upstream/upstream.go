// Package upstream is reportdb's client of an upstream PuppetDB: the server
// reportdb stands in front of when it stores reports itself and leaves
// facts, catalogs and the rest to an existing PuppetDB. It forwards requests
// (streaming status, headers and body) and fetches JSON answers.
package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Options configure the client.
type Options struct {
	URL string // base URL, e.g. https://puppetdb.example.com:8081
	// CertFile/KeyFile: the client certificate presented to an https
	// upstream (PuppetDB's 8081 requires one); CAFile verifies the
	// upstream's certificate (the Puppet CA); empty: the system roots.
	CertFile, KeyFile, CAFile string
	// Timeout bounds connecting and waiting for the response headers
	// (not the streaming of the body). Default 30s.
	Timeout time.Duration
}

// Client talks to the upstream PuppetDB.
type Client struct {
	base *url.URL
	http *http.Client
}

// ErrUnavailable wraps failures to reach the upstream.
var ErrUnavailable = errors.New("upstream PuppetDB unavailable")

// New validates the options and builds the client.
func New(o Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream: %q is not an http(s) URL", o.URL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("upstream: %q must not have a query or fragment", o.URL)
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("upstream: the client certificate and its key go together (upstream-tls-cert, upstream-tls-key)")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("upstream: client certificate: %v", err)
		}
		tlsConf.Certificates = []tls.Certificate{cert}
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("upstream: CA: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("upstream: CA %s holds no PEM certificate", o.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true, // pass Content-Encoding through untouched
	}
	return &Client{base: u, http: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}, nil
}

// URL is the upstream's base URL.
func (c *Client) URL() string { return c.base.String() }

// hop-by-hop headers are not forwarded (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// Forward sends r (with body, which may be a replacement for r.Body) to the
// upstream at the same path and query and streams the answer to w. An
// unreachable upstream is an error wrapping ErrUnavailable, returned before
// anything is written.
func (c *Client) Forward(w http.ResponseWriter, r *http.Request, body io.Reader) error {
	u := *c.base
	u.Path = c.base.Path + r.URL.Path
	u.RawPath = ""
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), body)
	if err != nil {
		return err
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	req.Header.Del("Content-Length")
	if b, ok := body.(*bytes.Reader); ok {
		req.ContentLength = int64(b.Len())
	} else if body != nil {
		req.ContentLength = r.ContentLength
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, c.base, err)
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // client went away
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		if err != nil {
			return nil // io.EOF, or the upstream cut the body: nothing more to do
		}
	}
}

// StatusError is a non-200 answer of the upstream to a query.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("upstream PuppetDB answered %d: %s", e.Status, e.Body)
}

// Query GETs path (e.g. /pdb/query/v4/nodes) with query parameter query
// and returns the body of a 200 answer.
func (c *Client) Query(ctx context.Context, path, query string) ([]byte, error) {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading %s: %v", ErrUnavailable, c.base, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		if len(b) > 4096 {
			b = b[:4096]
		}
		return nil, &StatusError{Status: resp.StatusCode, Body: string(b)}
	}
	return b, nil
}
