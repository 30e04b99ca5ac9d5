package query

// HasNodeState reports whether p (or a subquery of it) filters on node
// activity.
func (p *Plan) HasNodeState() bool {
	return p != nil && hasNodeState(p.Filter)
}

func hasNodeState(x Expr) bool {
	return anyExpr(x, func(x Expr) bool {
		switch x := x.(type) {
		case NodeState:
			return true
		case InQuery:
			return x.Sub.HasNodeState()
		}
		return false
	})
}

// ResolveNodeState returns p with every NodeState made the constant it is
// when no node is inactive (active: true, inactive: false), or p itself
// when it has none. Nearly every query of a fleet runs while no node is
// deactivated or expired; resolved, PuppetDB's implicit "active nodes
// only" costs such a query nothing and leaves it every access path it had
// (the rollups, the narrowed and keyed reads), which a test on certnames
// in its filter would not.
func ResolveNodeState(p *Plan) *Plan {
	if !p.HasNodeState() {
		return p
	}
	return resolvePlan(p, true)
}

// ResolveOwnNodeState is ResolveNodeState for p's own filter, leaving its
// subqueries as they are: for a query whose own rows belong to no
// inactive node, although some node is inactive (engine.nodeStates).
func ResolveOwnNodeState(p *Plan) *Plan {
	if !p.HasNodeState() {
		return p
	}
	return resolvePlan(p, false)
}

func resolvePlan(p *Plan, deep bool) *Plan {
	q := *p
	q.Filter = resolve(p.Filter, deep)
	if c, ok := q.Filter.(Const); ok && c.Value {
		q.Filter = nil // a filter that is always true is none
	}
	return &q
}

func resolve(x Expr, deep bool) Expr {
	switch x := x.(type) {
	case NodeState:
		return Const{Value: x.Active}
	case And:
		args := make([]Expr, 0, len(x.Args))
		for _, a := range x.Args {
			r := resolve(a, deep)
			if c, ok := r.(Const); ok && !c.Value {
				return Const{Value: false}
			}
			args = append(args, r)
		}
		if r := AndExpr(args...); r != nil {
			return r
		}
		return Const{Value: true}
	case Or:
		args := make([]Expr, 0, len(x.Args))
		for _, a := range x.Args {
			r := resolve(a, deep)
			if c, ok := r.(Const); ok {
				if c.Value {
					return Const{Value: true}
				}
				continue
			}
			args = append(args, r)
		}
		switch len(args) {
		case 0:
			return Const{Value: false}
		case 1:
			return args[0]
		}
		return Or{Args: args}
	case Not:
		r := resolve(x.X, deep)
		if c, ok := r.(Const); ok {
			return Const{Value: !c.Value}
		}
		return Not{X: r}
	case InQuery:
		if deep {
			return InQuery{Fields: x.Fields, Sub: ResolveNodeState(x.Sub)}
		}
	}
	return x
}

// ResolveCountsNodeState is ResolveNodeState for event counts.
func ResolveCountsNodeState(p *CountsPlan) *CountsPlan {
	if !p.Events.HasNodeState() && !hasNodeState(p.ReportFilter) {
		return p
	}
	q := *p
	q.Events = ResolveNodeState(p.Events)
	if p.ReportFilter != nil {
		q.ReportFilter = resolve(p.ReportFilter, true)
	}
	return &q
}
