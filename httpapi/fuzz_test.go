package httpapi_test

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"reportdb/internal/conformance"
	"reportdb/internal/testcorpus"
	"reportdb/sqlite"
	"reportdb/storetest"
)

var (
	fuzzOnce    sync.Once
	fuzzHandler http.Handler
)

// FuzzQuery sends arbitrary query parameters to the query endpoints of a
// server holding the corpus: whatever the input, the answer is a 2xx or a
// 4xx with a message, never a 5xx (no query can crash the server).
func FuzzQuery(f *testing.F) {
	for _, c := range testcorpus.LoadCases(f) {
		if c.Method == "GET" {
			u, err := url.Parse(c.Request.Target)
			if err == nil {
				f.Add(u.Path, u.RawQuery)
			}
		}
	}
	f.Fuzz(func(t *testing.T, path, rawQuery string) {
		fuzzOnce.Do(func() {
			// shared by every fuzz iteration of this process; the OS
			// reclaims it when the process ends
			dir, err := os.MkdirTemp("", "reportdb-fuzz")
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqlite.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			fuzzHandler, _ = storetest.NewHandler(db, 0)
			conformance.LoadCorpus(t, fuzzHandler)
		})
		if !strings.HasPrefix(path, "/pdb/query/v4") || strings.ContainsAny(path, " ?#%\x00") {
			return
		}
		target := path + "?" + rawQuery
		if _, err := url.ParseRequestURI(target); err != nil || strings.ContainsFunc(target, func(r rune) bool { return r <= 0x20 || r == 0x7f }) {
			return // not a request an HTTP client can send
		}
		r := do(t, fuzzHandler, "GET", target, nil, nil)
		if r.code >= 500 {
			t.Fatalf("GET %s?%s: %d %s", path, rawQuery, r.code, r.body)
		}
		if r.code >= 400 && strings.TrimSpace(r.body) == "" {
			t.Fatalf("GET %s?%s: %d with an empty body", path, rawQuery, r.code)
		}
	})
}
