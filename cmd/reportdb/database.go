package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"reportdb/internal/config"
)

// embeddedHint ends every message about a --database that cannot work:
// the user may not know that they need none.
const embeddedHint = "leave --database empty (REPORTDB_DATABASE unset) to use the embedded store in --data-dir instead"

// checkDatabaseURL refuses a --database that names another database than
// PostgreSQL. pgx would take a URL of another scheme for a keyword/value
// string and answer that it "cannot parse" a copy of it with more than
// the password masked.
func checkDatabaseURL(s string) error {
	return checkPostgresURL("database", s, "reportdb stores reports in PostgreSQL", embeddedHint)
}

// checkReadDatabaseURL is checkDatabaseURL for a --read-database.
func checkReadDatabaseURL(s string) error {
	return checkPostgresURL("read-database", s, "a read database is a PostgreSQL hot standby of --database",
		"remove it to read from --database only")
}

func checkPostgresURL(flag, s, why, hint string) error {
	i := strings.Index(s, "://")
	if i < 0 {
		return nil // a keyword/value connection string (host=... user=...)
	}
	scheme := strings.ToLower(s[:i])
	if scheme == "postgres" || scheme == "postgresql" {
		return nil
	}
	return fmt.Errorf("--%s %s: %s, not %q: give a postgres://USER:PASSWORD@HOST:PORT/DBNAME URL (or a host=... user=... dbname=... connection string), or %s",
		flag, config.MaskDatabase(s), why, scheme, hint)
}

// permanentDatabaseError reports whether PostgreSQL refused reportdb for
// a reason that waiting does not fix: authentication, a role or database
// that does not exist, a missing privilege. Everything else (connection
// refused, timeouts, a server starting up or out of connections) may
// pass, and reportdb keeps retrying and spooling.
func permanentDatabaseError(err error) bool {
	_, ok := databaseFix(err)
	return ok
}

// databaseFix says what to change for a permanent error, and whether it
// is one.
func databaseFix(err error) (string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "", false
	}
	switch {
	case pe.Code == "28P01":
		// also what a role that does not exist gets where PostgreSQL
		// asks for a password: it does not tell which
		return "correct the user name or password in --database (or create the role: CREATE ROLE ... LOGIN PASSWORD ...)", true
	case strings.HasPrefix(pe.Code, "28"):
		// 28000: the role does not exist, or pg_hba.conf has no entry
		// for this user, database and host (the message says which)
		return "create the role (CREATE ROLE ... LOGIN), or name an existing one in --database, or allow it in pg_hba.conf", true
	case pe.Code == "3D000":
		return "create the database (createdb -O USER DBNAME), or name an existing one in --database", true
	case pe.Code == "42501":
		return "grant the role what reportdb needs: CONNECT on the database and CREATE on its schema (the migrations create reportdb's tables)", true
	}
	return "", false
}

// databaseError describes a failure to open PostgreSQL (databaseURL) for
// the person who configured it: what to fix, and that the embedded store
// needs no database at all.
func databaseError(databaseURL string, err error) error {
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) {
		// pgx's text masks more than the password of what it cannot
		// parse: show what the user typed, the password masked
		reason := pce.Error()
		if i := strings.Index(reason, "`: "); strings.HasPrefix(reason, "cannot parse `") && i >= 0 {
			reason = reason[i+len("`: "):]
		}
		return fmt.Errorf("--database %s is not a PostgreSQL URL or connection string (%s): give postgres://USER:PASSWORD@HOST:PORT/DBNAME, or %s",
			config.MaskDatabase(databaseURL), reason, embeddedHint)
	}
	if fix, ok := databaseFix(err); ok {
		return fmt.Errorf("PostgreSQL (--database %s) refused reportdb: %s. To fix: %s; or %s",
			config.MaskDatabase(databaseURL), oneLine(err), fix, embeddedHint)
	}
	return fmt.Errorf("open PostgreSQL: %w", err)
}

// oneLine puts a multi-line driver error on one line, for a message.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
