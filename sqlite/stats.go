package sqlite

import "database/sql"

// DBStats returns the statistics of the writer connection and of the
// read-only connection pool (for metrics).
func (db *DB) DBStats() (writer, reader sql.DBStats) {
	writer = db.writer.Stats()
	if db.reader != nil {
		reader = db.reader.Stats()
	}
	return writer, reader
}
