package sqlgen

import "reportdb/schema/dialect"

// Dialect is the database a statement is rendered for (package dialect
// defines it, so that the backends implement it without importing sqlgen).
type Dialect = dialect.Dialect

// Capabilities is what a Dialect's database can do beyond the common
// methods (package dialect).
type Capabilities = dialect.Capabilities
