package schema_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"reportdb/schema"
)

// The packages whose string constants hold SQL, and the backends that SQL
// runs on.
var sqlPackages = []struct {
	dir string
	on  schema.Backend
}{
	{"../postgres", schema.PostgreSQL},
	{"../sqlite", schema.SQLite},
	{"../query/sqlgen", schema.Both},
	{".", schema.Both},
	{"../cmd/reportdb", schema.Both},
}

var (
	// a table named after a keyword (a name after FROM or JOIN directly
	// followed by "(" is a function: unnest, json_each)
	tableRef = regexp.MustCompile(`\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF (?:NOT )?EXISTS\s+)?(?:ONLY\s+)?([a-z_][a-z0-9_.]*)\b(\()?`)
	// a name the statement defines: a CTE, or a temporary table
	cteDef  = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)(?:\([a-z0-9_, ]*\))? AS (?:MATERIALIZED )?\(`)
	tempDef = regexp.MustCompile(`\bCREATE TEMP(?:ORARY)? TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)`)
	// literals that are not SQL (a database's error messages)
	notSQL = map[string]bool{"too many FROM clause terms": true}
)

// TestCodeNamesCatalogued checks that every table the SQL in the code names
// is in the Catalogue, on the backends that SQL runs on: the names the
// code uses are checked against the migrated schema through it
// (TestCatalogueMigrated). Names a statement defines itself (CTEs,
// temporary tables) and the databases' own catalogues are not tables of
// the schema.
func TestCodeNamesCatalogued(t *testing.T) {
	on := map[string]schema.Backend{}
	for _, tab := range schema.Catalogue {
		on[tab.Name] = tab.On
	}
	for _, pkg := range sqlPackages {
		files, err := filepath.Glob(filepath.Join(pkg.dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			lits := stringLiterals(t, file)
			local := map[string]bool{}
			for _, s := range lits {
				for _, m := range cteDef.FindAllStringSubmatch(s, -1) {
					local[m[1]] = true
				}
				for _, m := range tempDef.FindAllStringSubmatch(s, -1) {
					local[m[1]] = true
				}
			}
			for _, s := range lits {
				if notSQL[s] {
					continue
				}
				for _, m := range tableRef.FindAllStringSubmatch(s, -1) {
					name := strings.TrimPrefix(m[2], "temp.")
					function := m[3] != "" && (m[1] == "FROM" || m[1] == "JOIN")
					if function || local[name] || strings.HasPrefix(name, "pg_") ||
						strings.HasPrefix(name, "information_schema.") || strings.HasPrefix(name, "sqlite_") {
						continue
					}
					seen++
					if got, ok := on[name]; !ok || got&pkg.on != pkg.on {
						t.Errorf("%s names table %s, which schema.Catalogue does not list on %s", file, name, pkg.on)
					}
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s: no table names found: is the scan still reading its SQL?", pkg.dir)
		}
	}
}

// stringLiterals returns the string literals of a Go file.
func stringLiterals(t *testing.T, file string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}
