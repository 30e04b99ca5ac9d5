package postgres

import (
	"context"
	"strings"
	"testing"

	"reportdb/internal/pgtest"
)

// TestSessionSettings: the pool's connections run with reportdb's session
// settings (jit off, work_mem, random_page_cost, UTC), and a setting given
// in the database URL wins over reportdb's default.
func TestSessionSettings(t *testing.T) {
	u := pgtest.NewDatabase(t)
	show := func(url, name string) string {
		t.Helper()
		db, err := Open(context.Background(), url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v string
		if err := db.pool.QueryRow(context.Background(), "SHOW "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for name, want := range map[string]string{"jit": "off", "work_mem": "32MB", "random_page_cost": "1.1", "TimeZone": "UTC",
		"max_parallel_workers_per_gather": "0"} {
		if got := show(u, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	if got := show(u+sep+"jit=on&work_mem=8MB", "jit"); got != "on" {
		t.Errorf("jit=on in the URL: SHOW jit = %q", got)
	}
	if got := show(u+sep+"jit=on&work_mem=8MB", "work_mem"); got != "8MB" {
		t.Errorf("work_mem=8MB in the URL: SHOW work_mem = %q", got)
	}
}
