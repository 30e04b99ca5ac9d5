package query

// Plan is a validated query against one entity, ready for SQL generation.
type Plan struct {
	Entity *Entity
	Filter Expr // nil: every row
	// Columns is the projection; nil means full rows in the entity's
	// output order.
	Columns []Column
	GroupBy []Column
	OrderBy []Order
	Limit   int64 // 0: no limit
	Offset  int64
	// Distinct restricts events to the latest event per resource within
	// the window (distinct_resources).
	Distinct *DistinctWindow
	// DistinctLatest is set when the whole distinct query is exactly
	// ["=","latest_report?",V]: the candidate events are then restricted
	// to (non-)latest reports before picking the latest event.
	DistinctLatest *bool
}

// Column is one projected output column: a plain field or a function.
type Column struct {
	Name   string // output key
	Field  *Field // the field, or the function's argument (nil for count())
	Func   string // "", "count", "sum", "avg", "min", "max", "to_string"; "octet_length" (engine only: a document's size)
	Format string // to_string's format
}

// IsFunc reports whether the column is an aggregate or function call.
func (c Column) IsFunc() bool { return c.Func != "" }

// Aggregate reports whether the column aggregates rows.
func (c Column) Aggregate() bool {
	return c.Func != "" && c.Func != "to_string" && c.Func != "octet_length"
}

// Order is one ORDER BY term.
type Order struct {
	Field  *Field
	Column *Column // set when ordering by a computed column (event counts)
	Desc   bool
}

// Expr is a typed filter expression.
type Expr interface{ isExpr() }

// And is true when every Args is.
type And struct{ Args []Expr }

// Or is true when any of Args is.
type Or struct{ Args []Expr }

// Not negates X (SQL NOT: NULL stays unknown).
type Not struct{ X Expr }

// Cmp compares a field with a constant. Value is string, int64 (numbers
// and Unix-ms timestamps), float64, or bool; for Path fields "=" means
// "contains"; for JSONValue fields Value is the JSON text.
type Cmp struct {
	Op    string
	Field *Field
	Value any
	// Literal asks for the value to be written into the SQL text rather
	// than bound (only for constants reportdb itself adds, such as the
	// implicit type = 'agent', so cached plans can use partial indexes).
	Literal bool
}

// Match is a regular-expression match (PostgreSQL ARE semantics); for Path
// fields it is true when any element matches.
type Match struct {
	Field   *Field
	Pattern string
}

// IsNull tests a field for SQL NULL (Null false: IS NOT NULL).
type IsNull struct {
	Field *Field
	Null  bool
}

// InValues is membership in a literal list.
type InValues struct {
	Field  *Field
	Values []any
}

// InQuery is tuple membership in a subquery's projection.
type InQuery struct {
	Fields []*Field
	Sub    *Plan
}

// LatestReport is true when the row's report is (Latest) or is not the
// latest report of its node.
type LatestReport struct {
	Field  *Field
	Latest bool
}

// NodeState filters on the activity of the row's node (Field is its
// certname): node_state, ["node","active"] and the implicit "active nodes
// only" (see ResolveNodeState).
type NodeState struct {
	Field  *Field
	Active bool // true: active nodes; false: deactivated or expired
}

// Const is a constant truth value.
type Const struct{ Value bool }

func (And) isExpr()          {}
func (Or) isExpr()           {}
func (Not) isExpr()          {}
func (Cmp) isExpr()          {}
func (Match) isExpr()        {}
func (IsNull) isExpr()       {}
func (InValues) isExpr()     {}
func (InQuery) isExpr()      {}
func (LatestReport) isExpr() {}
func (NodeState) isExpr()    {}
func (Const) isExpr()        {}

// AndExpr combines expressions, dropping nils.
func AndExpr(xs ...Expr) Expr {
	var args []Expr
	for _, x := range xs {
		if c, ok := x.(Const); ok && c.Value {
			continue // true adds nothing
		}
		if x != nil {
			args = append(args, x)
		}
	}
	switch len(args) {
	case 0:
		return nil
	case 1:
		return args[0]
	}
	return And{Args: args}
}
