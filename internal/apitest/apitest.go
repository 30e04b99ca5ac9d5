// Package apitest builds, for tests, the HTTP API over a fresh embedded
// store: the few lines every package testing through the API would
// otherwise repeat.
package apitest

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"reportdb"
	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/internal/conformance"
	"reportdb/sqlite"
)

// Fixture is an API over an embedded store in a temporary directory;
// everything is closed when the test ends.
type Fixture struct {
	API       *httpapi.Server
	DB        *sqlite.DB
	Committer *ingest.Committer
}

// Options change a Fixture from the defaults: a committer of batches of
// 64 with no OnStored hook, and logs discarded.
type Options struct {
	Log      *slog.Logger
	OnStored func(r *reportdb.Report)
}

// New builds the API with cfg over an empty embedded store.
func New(t testing.TB, cfg httpapi.Config, o Options) *Fixture {
	t.Helper()
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := ingest.NewCommitter(db, 64)
	if o.OnStored != nil {
		c.OnStored = o.OnStored
	}
	t.Cleanup(c.Close)
	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Fixture{API: httpapi.New(cfg, db, c, log), DB: db, Committer: c}
}

// Corpus is New with the shared conformance corpus loaded.
func Corpus(t testing.TB, cfg httpapi.Config) *Fixture {
	t.Helper()
	f := New(t, cfg, Options{})
	conformance.LoadCorpus(t, f.API)
	return f
}

// Deactivate sends PuppetDB's "deactivate node" command (version 3, as
// the puppetdb terminus sends it) to h's command endpoint, and fails the
// test unless it is answered 200.
func Deactivate(t testing.TB, h http.Handler, certname string, at time.Time) {
	t.Helper()
	q := url.Values{"command": {"deactivate_node"}, "version": {"3"}, "certname": {certname}}
	body := fmt.Sprintf(`{"certname":%q,"producer_timestamp":%q}`, certname, at.UTC().Format(time.RFC3339Nano))
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("deactivating %s: %d %s", certname, rec.Code, rec.Body)
	}
}
