package sqlgen_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/sql/*.golden from the current SQL generator")

// TestGoldenSQL renders the statements of every conformance query in each
// dialect and compares them with testdata/sql/<dialect>.golden (go test
// ./query/sqlgen -run TestGoldenSQL -update rewrites them; review the diff).
// The conformance goldens say the answers are right; these say what SQL
// gives them, so that a change to the generator shows in review.
func TestGoldenSQL(t *testing.T) {
	n := 0
	got := storetest.RecordCases(t, testcorpus.LoadCases(t), nil, func(_ string, c testcorpus.Case, rec *storetest.Recorder, sb *strings.Builder) {
		for i, st := range rec.Stmts {
			fmt.Fprintf(sb, "-- %s #%d (%s %s) value-sensitive=%v\n%s\n-- args: %#v\n\n",
				c.ID, i, c.Request.Method, c.Request.Target, st.ValueSensitive, st.SQL, st.Args)
			n++
		}
	})
	if n < 2*250 {
		t.Fatalf("only %d statements rendered", n)
	}
	for name, sql := range got {
		storetest.Golden(t, filepath.Join("testdata", "sql", name+".golden"), sql, *update)
	}
}
