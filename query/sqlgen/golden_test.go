package sqlgen_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reportdb/schema/dialect"
	"strings"
	"testing"

	"reportdb/internal/conformance"
	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/sqlite"
	"reportdb/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/sql/*.golden from the current SQL generator")

// TestGoldenSQL renders the statements of every conformance query in each
// dialect and compares them with testdata/sql/<dialect>.golden (go test
// ./query/sqlgen -run TestGoldenSQL -update rewrites them; review the diff).
// The conformance goldens say the answers are right; these say what SQL
// gives them, so that a change to the generator shows in review.
func TestGoldenSQL(t *testing.T) {
	cases := testcorpus.LoadCases(t)
	for _, d := range []struct {
		name    string
		dialect dialect.Dialect
	}{{"sqlite", sqlite.Dialect{}}, {"postgres", postgres.Dialect{RegexCollation: "C.utf8"}}} {
		t.Run(d.name, func(t *testing.T) {
			rec := &storetest.Recorder{D: d.dialect}
			h := storetest.NewServer(t, rec)
			var sb strings.Builder
			n := 0
			for _, c := range cases {
				if !storetest.Served(c.Endpoint) {
					continue
				}
				rec.Stmts = rec.Stmts[:0]
				conformance.Do(h, c)
				for i, st := range rec.Stmts {
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
