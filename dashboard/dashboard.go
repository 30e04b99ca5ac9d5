// Package dashboard serves reportdb's built-in web dashboard under /ui/:
// server-rendered pages (html/template, embedded in the binary, no build
// step, no CDN) that read everything through PuppetDB's query language,
// answered by the query service exactly as the API answers it (see
// Options.Queries), with server-side SVG charts and one small script that shows times
// in the browser's time zone. Report content is untrusted (any node with a
// certificate writes it): html/template escapes it by context, and every
// page is sent with a Content-Security-Policy that allows no inline script.
package dashboard

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"reportdb/fleet"
	"reportdb/service"
)

//go:embed templates/*.html static/*
var files embed.FS

// Prefix is where the dashboard is served; "/" redirects to it.
const Prefix = "/ui/"

// Options configure the dashboard.
type Options struct {
	// Queries answers the queries: the server's query service (with its
	// query slots, service.Limit), so that a page shows what the API
	// answers.
	Queries service.Querier
	// Unresponsive is how long without a report makes a node unresponsive
	// (default 2h).
	Unresponsive time.Duration
	// ReportTTL is the retention (0: everything is kept); the overview's
	// chart covers it, at most 14 days.
	ReportTTL time.Duration
	// Fleet, when set and Ready, answers the overview's aggregates from
	// state kept up to date at ingest (package fleet) instead of
	// aggregating the retained reports and events at each page load.
	Fleet FleetState
	// Now returns the current time (tests inject it).
	Now func() time.Time
	// Log receives page errors.
	Log *slog.Logger
}

// FleetState answers the overview's aggregates without a query.
type FleetState interface {
	// Ready tells whether the state is loaded.
	Ready() bool
	// NodeCounts: nodes by status (Statuses) and environment, unresponsive
	// when their latest report ended before cutoff.
	NodeCounts(cutoff time.Time) map[string]map[string]int
	// HourCounts: reports by status per hour of producer_timestamp in
	// [start, end).
	HourCounts(start, end time.Time) []map[string]int
	// Failing: the resources with the most failure events (by event
	// timestamp) in [start, end).
	Failing(start, end time.Time, limit int) []fleet.FailingResource
}

// Dashboard is the web dashboard's http.Handler.
type Dashboard struct {
	o      Options
	pages  map[string]*template.Template
	static http.Handler
	mux    *http.ServeMux
}

// CSP is the Content-Security-Policy of every dashboard response: only the
// dashboard's own files, no inline script or style, no frames, no forms
// posting elsewhere.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// New builds the dashboard.
func New(o Options) *Dashboard {
	if o.Unresponsive <= 0 {
		o.Unresponsive = 2 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	d := &Dashboard{o: o, pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	for _, p := range []string{"overview", "nodes", "node", "report", "resource", "events", "error"} {
		d.pages[p] = template.Must(template.New(p+".html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+p+".html"))
	}
	static, _ := fs.Sub(files, "static")
	d.static = http.StripPrefix(Prefix+"static/", http.FileServer(http.FS(static)))
	d.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusFound)
	})
	d.mux.HandleFunc("GET "+Prefix+"{$}", d.overview)
	d.mux.HandleFunc("GET "+Prefix+"nodes", d.nodes)
	d.mux.HandleFunc("GET "+Prefix+"node/{certname}", d.node)
	d.mux.HandleFunc("GET "+Prefix+"report/{hash}", d.report)
	d.mux.HandleFunc("GET "+Prefix+"resource", d.resource)
	d.mux.HandleFunc("GET "+Prefix+"events", d.events)
	d.mux.HandleFunc("GET "+Prefix+"static/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		d.static.ServeHTTP(w, r)
	})
	d.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		d.fail(w, r, http.StatusNotFound, errors.New("no such page: "+r.URL.Path))
	})
	return d
}

// Owns tells whether the dashboard serves path: "/" and everything under
// Prefix (PuppetDB's API uses neither).
func Owns(path string) bool {
	return path == "/" || path == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(path, Prefix)
}

// Wrap serves the dashboard's paths and hands every other request to next.
func (d *Dashboard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Owns(r.URL.Path) {
			d.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only: GET only", http.StatusMethodNotAllowed)
		return
	}
	d.mux.ServeHTTP(w, r)
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string
	Now   time.Time
	Data  any
}

// render executes a page into a buffer first, so that a template error is
// a clean 500 rather than half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, name, title string, data any) {
	var buf bytes.Buffer
	if err := d.pages[name].ExecuteTemplate(&buf, "layout", page{Title: title, Nav: name, Now: d.o.Now(), Data: data}); err != nil {
		d.o.Log.Error("dashboard template", "page", name, "err", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// fail answers an error page: 4xx for the user's mistakes (an invalid
// regular expression, a bad time), 5xx otherwise.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	var qe *service.Error
	if errors.As(err, &qe) {
		status = qe.Status
		if status < 400 {
			status = http.StatusBadGateway
		}
	}
	if status >= 500 {
		d.o.Log.Error("dashboard page", "path", r.URL.Path, "err", err)
	}
	var buf bytes.Buffer
	msg := err.Error()
	if qe != nil {
		msg = qe.Message
	}
	if e := d.pages["error"].ExecuteTemplate(&buf, "layout", page{Title: http.StatusText(status), Now: d.o.Now(),
		Data: map[string]any{"Status": status, "Message": msg}}); e != nil {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// notFound names what does not exist.
func notFound(format string, args ...any) error {
	return &service.Error{Status: http.StatusNotFound, Message: sprintf(format, args...)}
}

// badRequest is a user error found by the dashboard itself.
func badRequest(format string, args ...any) error {
	return &service.Error{Status: http.StatusBadRequest, Message: sprintf(format, args...)}
}
