package httpapi_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/conformance"
	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/query/sqlgen"
	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/sql/*.golden from the current SQL generator")

// recorder is a backend that stores nothing and answers every statement
// with no rows, recording the statements: the SQL the engine generates in
// a dialect, without a database.
type recorder struct {
	d     sqlgen.Dialect
	stmts []store.Statement
}

func (r *recorder) Dialect() sqlgen.Dialect { return r.d }
func (r *recorder) StoreReports(context.Context, []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	return nil, nil, errors.New("recorder stores nothing")
}
func (r *recorder) Snapshot(ctx context.Context, fn func(store.Querier) error) error { return fn(r) }
func (r *recorder) Query(_ context.Context, st store.Statement) (store.Rows, error) {
	r.stmts = append(r.stmts, st)
	return noRows{}, nil
}
func (r *recorder) Ping(context.Context) error                                { return nil }
func (r *recorder) DeleteReportsBefore(context.Context, int64) (int64, error) { return 0, nil }
func (r *recorder) Close() error                                              { return nil }
func (r *recorder) DeactivateNode(context.Context, string, int64) (bool, error) {
	return false, nil
}
func (r *recorder) ExpireNodes(context.Context, int64, int64) ([]string, error) { return nil, nil }
func (r *recorder) PurgeNodes(context.Context, int64, int) ([]string, error)    { return nil, nil }

type noRows struct{}

func (noRows) NumColumns() int   { return 0 }
func (noRows) Next() bool        { return false }
func (noRows) Scan(...any) error { return nil }
func (noRows) Err() error        { return nil }
func (noRows) Close()            {}

var _ engine.Backend = (*recorder)(nil)

// TestGoldenSQL renders the statements of every conformance query in each
// dialect and compares them with testdata/sql/<dialect>.golden (go test
// ./httpapi -run TestGoldenSQL -update rewrites them; review the diff).
// The conformance goldens say the answers are right; these say what SQL
// gives them, so that a change to the generator shows in review.
func TestGoldenSQL(t *testing.T) {
	cases := testcorpus.LoadCases(t)
	for _, d := range []struct {
		name    string
		dialect sqlgen.Dialect
	}{{"sqlite", sqlite.Dialect{}}, {"postgres", postgres.Dialect{RegexCollation: "C.utf8"}}} {
		t.Run(d.name, func(t *testing.T) {
			rec := &recorder{d: d.dialect}
			h := storetest.NewServer(t, rec)
			var sb strings.Builder
			n := 0
			for _, c := range cases {
				if !storetest.Served(c.Endpoint) {
					continue
				}
				rec.stmts = rec.stmts[:0]
				conformance.Do(h, c)
				for i, st := range rec.stmts {
					fmt.Fprintf(&sb, "-- %s #%d (%s %s) value-sensitive=%v\n%s\n-- args: %#v\n\n",
						c.ID, i, c.Request.Method, c.Request.Target, st.ValueSensitive, st.SQL, st.Args)
					n++
				}
			}
			if n < 250 {
				t.Fatalf("only %d statements rendered", n)
			}
			path := filepath.Join("testdata", "sql", d.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := sb.String(); got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := 0; i < len(gl) && i < len(wl); i++ {
					if gl[i] != wl[i] {
						t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run with -update if the change is intended)", path, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s: %d lines, want %d (run with -update if the change is intended)", path, len(gl), len(wl))
			}
		})
	}
}
