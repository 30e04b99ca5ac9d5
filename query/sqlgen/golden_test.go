package sqlgen_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"reportdb/internal/conformance"
	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/schema/dialect"
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
			storetest.Golden(t, path, sb.String(), *update)
		})
	}
}
