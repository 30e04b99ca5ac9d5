// Command storagestat prints where the bytes of a reportdb database go, for
// bench/storage.sh:
//
//   - every table and index: rows, heap (PostgreSQL's main fork; SQLite's
//     b-tree pages), TOAST (with its index; SQLite's overflow pages),
//     indexes, total, bytes per report and share of the total, partitions
//     of one parent (reports_YYYYMMDD, ...) added up under it;
//   - the largest tables and indexes in one ranking;
//   - the columns of the largest tables: bytes per report as stored and raw;
//   - the JSON documents (report_data's metrics and logs on PostgreSQL, the
//     reports' metrics, logs and resource_events on SQLite): stored and raw
//     bytes per report, and what deflate makes of a sample of them.
//
// Usage:
//
//	go run ./bench/storagestat -postgres postgres://postgres@127.0.0.1:5432/storage_medium
//	go run ./bench/storagestat -sqlite DATA_DIR
//
// PostgreSQL's figures come from pg_class, pg_inherits (pg_partition_root),
// pg_relation_size, pg_total_relation_size, pg_indexes_size and, per
// column, pg_column_size against octet_length; SQLite's from the dbstat
// virtual table (compiled into modernc.org/sqlite) after a WAL checkpoint.
// MB are 10^6 bytes.
package main

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"
)

// rel is one line of the table: a table (its partitions added up) or an
// index (the same index of every partition added up).
type rel struct {
	name  string
	index bool
	table string // an index's table
	parts int    // relations added up (partitions)
	rows  int64
	heap  int64 // main fork; SQLite: b-tree pages
	toast int64 // TOAST table and its index; SQLite: overflow pages
	other int64 // the free space and visibility maps (PostgreSQL)
	idx   int64 // the table's indexes
	total int64
}

// column is one column's bytes: as stored (compressed, when PostgreSQL
// compressed it) and raw (the text's length).
type column struct {
	name        string
	stored, raw int64
}

// doc is one JSON document column.
type doc struct {
	table, column  string
	rows, present  int64 // rows, rows where it is not NULL
	stored, raw    int64
	compressed     int64 // PostgreSQL: values stored compressed
	sample         int   // documents in the deflate sample
	sampleRaw      int64
	deflate1, def6 int64 // the sample deflated at level 1 and 6
}

type result struct {
	backend  string
	reports  int64
	rels     []rel
	total    int64  // all relations
	file     int64  // the database (pg_database_size; the SQLite file)
	fileNote string // what file-total covers
	columns  map[string][]column
	colRows  map[string]int64
	colData  map[string]int64 // the table's heap + TOAST, to compare the columns with
	docs     []doc
}

func main() {
	pgURL := flag.String("postgres", "", "PostgreSQL URL of a reportdb database")
	sqliteDir := flag.String("sqlite", "", "data directory (or file) of a reportdb embedded store")
	sampleN := flag.Int("sample", 2000, "documents per column deflated to estimate compression")
	top := flag.Int("top", 10, "entries in the ranking")
	flag.Parse()
	ctx := context.Background()
	var (
		r   *result
		err error
	)
	switch {
	case *pgURL != "" && *sqliteDir == "":
		r, err = postgres(ctx, *pgURL, *sampleN)
	case *sqliteDir != "" && *pgURL == "":
		r, err = embedded(ctx, *sqliteDir, *sampleN)
	default:
		fmt.Fprintln(os.Stderr, "usage: storagestat -postgres URL | -sqlite DIR")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "storagestat:", err)
		os.Exit(1)
	}
	r.print(os.Stdout, *top)
}

// ---- PostgreSQL

func postgres(ctx context.Context, url string, sampleN int) (*result, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	r := &result{backend: "PostgreSQL", columns: map[string][]column{}, colRows: map[string]int64{}, colData: map[string]int64{}}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM reports`).Scan(&r.reports); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&r.file); err != nil {
		return nil, err
	}
	r.fileNote = "pg_database_size (with the system catalogs)"
	const userRels = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`
	// tables: leaf relations with storage, grouped by their partition root
	rows, err := conn.Query(ctx, `
		SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text,
		  pg_relation_size(c.oid, 'main'),
		  coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
		  pg_indexes_size(c.oid), pg_total_relation_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE `+userRels+` AND c.relkind IN ('r', 'm')`)
	if err != nil {
		return nil, err
	}
	tables := map[string]*rel{}
	for rows.Next() {
		var name string
		var heap, toast, idx, total int64
		if err := rows.Scan(&name, &heap, &toast, &idx, &total); err != nil {
			return nil, err
		}
		t := tables[name]
		if t == nil {
			t = &rel{name: name}
			tables[name] = t
		}
		t.parts++
		t.heap += heap
		t.toast += toast
		t.idx += idx
		t.total += total
		t.other += total - heap - toast - idx
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// indexes: leaf indexes, grouped by their partitioned index or, for an
	// index of one partition alone (reports_YYYYMMDD_hash), by its name
	// with the partition's suffix as *
	rows, err = conn.Query(ctx, `
		SELECT ic.relname, coalesce(pg_partition_root(i.indexrelid), i.indexrelid)::regclass::text,
		  t.relname, coalesce(pg_partition_root(t.oid), t.oid)::regclass::text,
		  pg_total_relation_size(i.indexrelid)
		FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
		  JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE `+userRels+` AND ic.relkind = 'i'`)
	if err != nil {
		return nil, err
	}
	indexes := map[string]*rel{}
	for rows.Next() {
		var iname, iroot, tname, troot string
		var size int64
		if err := rows.Scan(&iname, &iroot, &tname, &troot, &size); err != nil {
			return nil, err
		}
		name := iroot
		if iroot == iname && tname != troot {
			name = strings.Replace(iname, tname, troot+"_*", 1)
			if name == iname {
				name = troot + ": " + iname
			}
		}
		x := indexes[name]
		if x == nil {
			x = &rel{name: name, index: true, table: troot}
			indexes[name] = x
		}
		x.parts++
		x.total += size
		x.idx += size
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for name, t := range tables {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{name}.Sanitize()).Scan(&t.rows); err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
		r.rels = append(r.rels, *t)
	}
	for _, x := range indexes {
		r.rels = append(r.rels, *x)
	}
	r.sortRels()

	// the columns of the largest tables
	for _, t := range r.bigTables() {
		cols, err := pgColumns(ctx, conn, t.name)
		if err != nil {
			return nil, err
		}
		var sel []string
		for _, c := range cols {
			id := pgx.Identifier{c.name}.Sanitize()
			raw := "pg_column_size(" + id + ")"
			switch c.typ {
			case "text", "character varying", "bytea", "json":
				raw = "octet_length(" + id + ")"
			case "jsonb":
				raw = "octet_length(" + id + "::text)"
			}
			sel = append(sel, "coalesce(sum(pg_column_size("+id+")), 0)", "coalesce(sum("+raw+"), 0)")
		}
		vals := make([]int64, len(sel)+1)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := conn.QueryRow(ctx, `SELECT count(*), `+strings.Join(sel, ", ")+` FROM `+pgx.Identifier{t.name}.Sanitize()).Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", t.name, err)
		}
		r.colRows[t.name] = vals[0]
		r.colData[t.name] = t.heap + t.toast
		for i, c := range cols {
			r.columns[t.name] = append(r.columns[t.name], column{name: c.name, stored: vals[1+2*i], raw: vals[2+2*i]})
		}
	}

	// the JSON documents
	for _, col := range []string{"metrics", "logs"} {
		d := doc{table: "report_data", column: col}
		if err := conn.QueryRow(ctx, `SELECT count(*), count(`+col+`), coalesce(sum(pg_column_size(`+col+`)), 0),
			coalesce(sum(octet_length(`+col+`)), 0), count(*) FILTER (WHERE pg_column_compression(`+col+`) IS NOT NULL)
			FROM report_data`).Scan(&d.rows, &d.present, &d.stored, &d.raw, &d.compressed); err != nil {
			return nil, err
		}
		if err := sample(&d, sampleN, func(every int64) (iter, error) {
			rows, err := conn.Query(ctx, `SELECT `+col+` FROM report_data WHERE `+col+` IS NOT NULL AND (id & 4294967295) % $1 = 0`, every)
			if err != nil {
				return nil, err
			}
			return func() ([]byte, bool, error) {
				if !rows.Next() {
					rows.Close()
					return nil, false, rows.Err()
				}
				var b []byte
				err := rows.Scan(&b)
				return b, err == nil, err
			}, nil
		}); err != nil {
			return nil, err
		}
		r.docs = append(r.docs, d)
	}
	return r, nil
}

type pgCol struct{ name, typ string }

func pgColumns(ctx context.Context, conn *pgx.Conn, table string) ([]pgCol, error) {
	rows, err := conn.Query(ctx, `SELECT a.attname, format_type(a.atttypid, NULL)
		FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, table)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (pgCol, error) {
		var c pgCol
		err := row.Scan(&c.name, &c.typ)
		return c, err
	})
}

// ---- SQLite

func embedded(ctx context.Context, path string, sampleN int) (*result, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "reportdb.sqlite")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// the WAL's pages into the file, so that dbstat and the file agree
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return nil, err
	}
	r := &result{backend: "SQLite (embedded store)", columns: map[string][]column{}, colRows: map[string]int64{}, colData: map[string]int64{}}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM reports`).Scan(&r.reports); err != nil {
		return nil, err
	}
	var pageSize, pageCount, freePages int64
	if err := db.QueryRowContext(ctx, `SELECT page_size, page_count, freelist_count
		FROM pragma_page_size, pragma_page_count, pragma_freelist_count`).Scan(&pageSize, &pageCount, &freePages); err != nil {
		return nil, err
	}
	r.file = pageSize * pageCount
	r.fileNote = fmt.Sprintf("the file: %d pages of %d bytes, %d of them free", pageCount, pageSize, freePages)

	// which table each b-tree belongs to
	owner := map[string]string{}
	isIndex := map[string]bool{}
	var tableNames []string
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var typ, name, tbl string
		if err := rows.Scan(&typ, &name, &tbl); err != nil {
			return nil, err
		}
		owner[name] = tbl
		isIndex[name] = typ == "index"
		if typ == "table" {
			tableNames = append(tableNames, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rels := map[string]*rel{}
	get := func(name string) *rel {
		x := rels[name]
		if x == nil {
			x = &rel{name: name, parts: 1, index: isIndex[name], table: owner[name]}
			rels[name] = x
		}
		return x
	}
	rows, err = db.QueryContext(ctx, `SELECT name, pagetype = 'overflow', sum(pgsize) FROM dbstat GROUP BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("dbstat: %w", err)
	}
	for rows.Next() {
		var name string
		var overflow bool
		var size int64
		if err := rows.Scan(&name, &overflow, &size); err != nil {
			return nil, err
		}
		x := get(name)
		x.total += size
		switch {
		case x.index:
			x.idx += size
		case overflow:
			x.toast += size
		default:
			x.heap += size
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, x := range rels {
		if x.index {
			t := get(x.table)
			t.idx += x.idx
			t.total += x.idx
		}
	}
	for _, x := range rels {
		x.rows = -1 // sqlite_schema, the free pages: not counted
	}
	for _, name := range tableNames {
		t := get(name)
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM "`+name+`"`).Scan(&t.rows); err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
	}
	if freePages > 0 {
		rels["(free pages)"] = &rel{name: "(free pages)", rows: -1, heap: freePages * pageSize, total: freePages * pageSize}
	}
	for _, x := range rels {
		r.rels = append(r.rels, *x)
	}
	r.sortRels()

	// the columns of the largest tables: the bytes of each value in the
	// record format (integers 0 to 8 bytes by magnitude, text its length)
	for _, t := range r.bigTables() {
		rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, t.name)
		if err != nil {
			return nil, err
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				return nil, err
			}
			cols = append(cols, c)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		var sel []string
		for _, c := range cols {
			q := `"` + c + `"`
			sel = append(sel, `coalesce(sum(CASE typeof(`+q+`) WHEN 'integer' THEN
				CASE WHEN `+q+` IN (0, 1) THEN 0 WHEN `+q+` BETWEEN -128 AND 127 THEN 1
				WHEN `+q+` BETWEEN -32768 AND 32767 THEN 2 WHEN `+q+` BETWEEN -8388608 AND 8388607 THEN 3
				WHEN `+q+` BETWEEN -2147483648 AND 2147483647 THEN 4
				WHEN `+q+` BETWEEN -140737488355328 AND 140737488355327 THEN 6 ELSE 8 END
				WHEN 'real' THEN 8 WHEN 'null' THEN 0 ELSE length(CAST(`+q+` AS BLOB)) END), 0)`)
		}
		vals := make([]int64, len(sel)+1)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*), `+strings.Join(sel, ", ")+` FROM "`+t.name+`"`).Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", t.name, err)
		}
		r.colRows[t.name] = vals[0]
		r.colData[t.name] = t.heap + t.toast
		for i, c := range cols {
			r.columns[t.name] = append(r.columns[t.name], column{name: c, stored: vals[1+i], raw: vals[1+i]})
		}
	}

	// the JSON documents: SQLite stores them as they are
	for _, col := range []string{"metrics", "logs", "resource_events"} {
		d := doc{table: "reports", column: col}
		if err := db.QueryRowContext(ctx, `SELECT count(*), count(`+col+`), coalesce(sum(length(CAST(`+col+` AS BLOB))), 0)
			FROM reports`).Scan(&d.rows, &d.present, &d.raw); err != nil {
			return nil, err
		}
		d.stored = d.raw
		if err := sample(&d, sampleN, func(every int64) (iter, error) {
			rows, err := db.QueryContext(ctx, `SELECT CAST(`+col+` AS BLOB) FROM reports WHERE `+col+` IS NOT NULL AND id % ? = 0`, every)
			if err != nil {
				return nil, err
			}
			return func() ([]byte, bool, error) {
				if !rows.Next() {
					rows.Close()
					return nil, false, rows.Err()
				}
				var b []byte
				err := rows.Scan(&b)
				return b, err == nil, err
			}, nil
		}); err != nil {
			return nil, err
		}
		r.docs = append(r.docs, d)
	}
	return r, nil
}

// ---- both

// iter returns the next document, false at the end.
type iter func() ([]byte, bool, error)

// sample deflates about n of d's documents, evenly spread, at levels 1
// and 6, each document on its own (as a column value would be).
func sample(d *doc, n int, open func(every int64) (iter, error)) error {
	if d.present == 0 || n <= 0 {
		return nil
	}
	every := max(d.rows/int64(n), 1)
	next, err := open(every)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	deflated := func(b []byte, level int) int64 {
		buf.Reset()
		w, _ := flate.NewWriter(&buf, level)
		w.Write(b)
		w.Close()
		return int64(buf.Len())
	}
	for {
		b, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		d.sample++
		d.sampleRaw += int64(len(b))
		d.deflate1 += deflated(b, 1)
		d.def6 += deflated(b, 6)
	}
}

func (r *result) sortRels() {
	slices.SortFunc(r.rels, func(a, b rel) int {
		return cmp.Or(cmp.Compare(b.total, a.total), cmp.Compare(a.name, b.name))
	})
	r.total = 0
	for _, x := range r.rels {
		if !x.index {
			r.total += x.total
		}
	}
}

// bigTables are the tables that hold 3 % or more of the bytes in their
// rows (heap and TOAST), at most 6.
func (r *result) bigTables() []rel {
	var out []rel
	for _, x := range r.rels {
		if !x.index && !strings.HasPrefix(x.name, "(") && x.heap+x.toast >= r.total*3/100 {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b rel) int { return cmp.Compare(b.heap+b.toast, a.heap+a.toast) })
	return out[:min(len(out), 6)]
}

func (r *result) print(w io.Writer, top int) {
	p := func(f string, a ...any) { fmt.Fprintf(w, f, a...) }
	per := func(b int64) string {
		if r.reports == 0 {
			return "-"
		}
		return thousands(int64(float64(b)/float64(r.reports) + 0.5))
	}
	share := func(b int64) string {
		if r.total == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(b)/float64(r.total))
	}
	heapName, toastName := "heap", "TOAST"
	if strings.HasPrefix(r.backend, "SQLite") {
		heapName, toastName = "b-tree", "overflow"
	}
	p("== %s: %s reports, %s in all relations, %s B/report (%s: %s)\n\n", r.backend, thousands(r.reports),
		mb(r.total), per(r.total), r.fileNote, mb(r.file))
	p("%-42s %11s %10s %10s %10s %10s %9s %7s\n", "table / index", "rows", heapName, toastName, "indexes", "total", "B/report", "share")
	var tables []rel
	for _, x := range r.rels {
		if !x.index {
			tables = append(tables, x)
		}
	}
	var sum rel
	for _, t := range tables {
		name := t.name
		if t.parts > 1 {
			name = fmt.Sprintf("%s (%d partitions)", t.name, t.parts)
		}
		rows := thousands(t.rows)
		if t.rows < 0 {
			rows = ""
		}
		p("%-42s %11s %10s %10s %10s %10s %9s %7s\n", name, rows, mb(t.heap+t.other), mb(t.toast), mb(t.idx), mb(t.total), per(t.total), share(t.total))
		sum.heap += t.heap + t.other
		sum.toast += t.toast
		sum.idx += t.idx
		sum.total += t.total
		for _, x := range r.rels {
			if x.index && x.table == t.name {
				name := "  " + x.name
				if x.parts > 1 {
					name = fmt.Sprintf("  %s (%d)", x.name, x.parts)
				}
				p("%-42s %11s %10s %10s %10s %10s %9s %7s\n", name, "", "", "", mb(x.idx), "", per(x.idx), share(x.idx))
			}
		}
	}
	p("%-42s %11s %10s %10s %10s %10s %9s %7s\n", "total", "", mb(sum.heap), mb(sum.toast), mb(sum.idx), mb(sum.total), per(sum.total), share(sum.total))
	if strings.HasPrefix(r.backend, "PostgreSQL") {
		p("(heap includes the free space and visibility maps; TOAST includes its index)\n")
	}

	p("\nlargest %d (a table's rows, an index):\n", top)
	var ranked []rel
	for _, x := range r.rels {
		if !x.index {
			x.total -= x.idx
		}
		ranked = append(ranked, x)
	}
	slices.SortFunc(ranked, func(a, b rel) int { return cmp.Compare(b.total, a.total) })
	for i, x := range ranked[:min(top, len(ranked))] {
		kind := "table"
		if strings.HasPrefix(x.name, "(") {
			kind = ""
		}
		if x.index {
			kind = "index on " + x.table
		}
		p("%3d. %-36s %-28s %10s %9s B/report %7s\n", i+1, x.name, kind, mb(x.total), per(x.total), share(x.total))
	}

	for _, t := range r.bigTables() {
		cols := r.columns[t.name]
		if len(cols) == 0 {
			continue
		}
		slices.SortFunc(cols, func(a, b column) int { return cmp.Compare(b.stored, a.stored) })
		var stored, raw int64
		for _, c := range cols {
			stored += c.stored
			raw += c.raw
		}
		p("\ncolumns of %s (%s rows; %s of rows, %s B/report): B/report stored, raw\n", t.name,
			thousands(r.colRows[t.name]), mb(r.colData[t.name]), per(r.colData[t.name]))
		var rest column
		for _, c := range cols {
			if c.stored*100 < stored {
				rest.stored += c.stored
				rest.raw += c.raw
				rest.name = "(other columns)"
				continue
			}
			p("  %-32s %9s %9s\n", c.name, per(c.stored), per(c.raw))
		}
		if rest.name != "" {
			p("  %-32s %9s %9s\n", rest.name, per(rest.stored), per(rest.raw))
		}
		p("  %-32s %9s %9s\n", "(row and page overhead, free space)", per(r.colData[t.name]-stored), "")
	}

	p("\nJSON documents, per report: stored (as the database keeps them) against raw (their text), and\n")
	p("a sample deflated one document at a time (zlib level 1 and 6):\n")
	p("%-28s %9s %10s %10s %7s %12s %12s %12s\n", "document", "present", "stored", "raw", "stored/raw", "compressed", "deflate-1", "deflate-6")
	for _, d := range r.docs {
		comp := "-"
		if strings.HasPrefix(r.backend, "PostgreSQL") {
			comp = pct(d.compressed, d.present)
		}
		p("%-28s %9s %10s %10s %7s %12s %12s %12s\n", d.table+"."+d.column, pct(d.present, d.rows), per(d.stored), per(d.raw),
			ratio(d.stored, d.raw), comp, ratio(d.deflate1, d.sampleRaw), ratio(d.def6, d.sampleRaw))
	}
	p("(stored, raw: B/report over all reports; compressed: the share of values kept compressed;\n")
	p(" deflate: compressed/raw size of %s sampled documents)\n", thousands(int64(r.docs[0].sample)))
}

func mb(b int64) string {
	switch {
	case b == 0:
		return "0"
	case b < 100_000:
		return fmt.Sprintf("%.0f kB", float64(b)/1e3)
	default:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	}
}

func pct(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(a)/float64(b))
}

func ratio(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
