package schema_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/schema"
	"reportdb/sqlite"
)

// TestCatalogueMigrated applies the migrations of each backend to a fresh
// database and checks that every table and column of schema.Catalogue
// exists in the schema they make, on the backends the catalogue lists it
// for, and that a table listed for one backend only is not on the other
// (so that On stays exact). The catalogue is what the code names: this is
// where a misspelt or dropped name fails, rather than in the statement
// that runs it.
func TestCatalogueMigrated(t *testing.T) {
	for _, b := range []struct {
		on      schema.Backend
		columns func(*testing.T) map[string]map[string]bool
	}{{schema.SQLite, sqliteColumns}, {schema.PostgreSQL, postgresColumns}} {
		t.Run(b.on.String(), func(t *testing.T) {
			migrated := b.columns(t)
			for _, tab := range schema.Catalogue {
				cols, ok := migrated[tab.Name]
				switch {
				case tab.On&b.on == 0 && ok:
					t.Errorf("table %s is on %s, which the catalogue does not list it for", tab.Name, b.on)
				case tab.On&b.on == 0:
				case !ok:
					t.Errorf("table %s is not in the migrated schema", tab.Name)
				default:
					for _, c := range tab.Columns {
						if !cols[c] {
							t.Errorf("column %s.%s is not in the migrated schema", tab.Name, c)
						}
					}
				}
			}
		})
	}
}

// sqliteColumns migrates a fresh SQLite database and returns its tables'
// columns.
func sqliteColumns(t *testing.T) map[string]map[string]bool {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p
		WHERE m.type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, func(dst ...any) error { return rows.Scan(dst...) }, rows.Next, rows.Err)
}

// postgresColumns migrates a fresh PostgreSQL database and returns its
// tables' columns.
func postgresColumns(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	return collect(t, rows.Scan, rows.Next, rows.Err)
}

func collect(t *testing.T, scan func(...any) error, next func() bool, rerr func() error) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for next() {
		var tab, col string
		if err := scan(&tab, &col); err != nil {
			t.Fatal(err)
		}
		if out[tab] == nil {
			out[tab] = map[string]bool{}
		}
		out[tab][col] = true
	}
	if err := rerr(); err != nil {
		t.Fatal(err)
	}
	return out
}
