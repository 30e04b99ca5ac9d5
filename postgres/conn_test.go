package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func getConn(t *testing.T, u string) *pgx.Conn {
	c, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustExec runs statements on conn in order, failing the test at the
// first that fails.
func mustExec(t *testing.T, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// planRelations are the relations that the plan of an explain=analyze
// answer reads.
func planRelations(rows []map[string]any) map[string]bool {
	plan, _ := json.Marshal(rows)
	read := map[string]bool{}
	for _, p := range strings.Split(string(plan), `"Relation Name":"`)[1:] {
		read[p[:strings.IndexByte(p, '"')]] = true
	}
	return read
}
