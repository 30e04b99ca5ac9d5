package query

// FiltersOrSorts reports whether p selects or orders rows by f: f in its
// filter or order_by, or anywhere in a subquery (whose extracted columns
// are what the outer query matches against). For callers that explain an
// answer, such as a field that is always null making a filter match
// nothing; projecting f alone does not count.
func (p *Plan) FiltersOrSorts(f *Field) bool {
	return p.uses(f, false)
}

func (p *Plan) uses(f *Field, sub bool) bool {
	if p == nil {
		return false
	}
	for _, o := range p.OrderBy {
		if o.Field == f || o.Column != nil && o.Column.Field == f {
			return true
		}
	}
	if sub {
		for _, c := range p.Columns {
			if c.Field == f {
				return true
			}
		}
	}
	return exprUses(p.Filter, f)
}

func exprUses(x Expr, f *Field) bool {
	return anyExpr(x, func(x Expr) bool {
		switch x := x.(type) {
		case Cmp:
			return x.Field == f
		case Match:
			return x.Field == f
		case IsNull:
			return x.Field == f
		case InValues:
			return x.Field == f
		case InQuery:
			for _, g := range x.Fields {
				if g == f {
					return true
				}
			}
			return x.Sub.uses(f, true)
		case LatestReport:
			return x.Field == f
		case NodeState:
			return x.Field == f
		}
		return false
	})
}

// anyExpr reports whether leaf holds for some term of x, through its
// and, or and not; a subquery (InQuery) is a term, which leaf may enter.
func anyExpr(x Expr, leaf func(Expr) bool) bool {
	switch x := x.(type) {
	case And:
		for _, a := range x.Args {
			if anyExpr(a, leaf) {
				return true
			}
		}
		return false
	case Or:
		for _, a := range x.Args {
			if anyExpr(a, leaf) {
				return true
			}
		}
		return false
	case Not:
		return anyExpr(x.X, leaf)
	}
	return leaf(x)
}
