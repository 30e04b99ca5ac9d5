package pql

// The rules below follow PuppetDB's pql-grammar.ebnf. Each returns every
// parse from pos; alternatives are tried in grammar order and optional parts
// are tried before they are skipped, so failures are recorded in the order
// the error message needs (see errors.go).

// Memoisation keys, one per memoised rule.
const (
	kQuery = iota
	kFrom
	kEntity
	kExtract
	kWhere
	kPaging
	kOrderParam
	kFieldList
	kField
	kFunction
	kOr
	kAnd
	kNot
	kRest
	kCond
	kString
	kStringList
	kInteger
	kReal
	kLiteral
	kLiteralList
)

// entities in grammar order.
var entities = []string{
	"facts", "reports", "catalogs", "packages", "package_inventory", "resources",
	"nodes", "environments", "factsets", "fact_paths", "fact_contents",
	"inventory", "edges", "events",
}

var functionNames = []string{"count", "avg", "sum", "min", "max", "to_string"}

// top parses the whole input: query = [ws] from [ws], the trailing
// whitespace having to reach the end of the input.
func (p *parser) top() (any, bool) {
	n := len(p.src)
	for _, a := range p.optWS(0) {
		for _, f := range p.from(a) {
			i := f.end
			if i < n && p.wsEnd(i) == n {
				return f.val, true
			}
			p.record(i, reason{text: reWS, full: true})
			if i == n {
				return f.val, true
			}
			p.record(i, reason{text: endOfString})
		}
	}
	return nil, false
}

// query = [ws] from [ws] (as the value of "in").
func (p *parser) query(pos int) []res {
	return p.memoize(kQuery, pos, func() []res {
		var out resSet
		for _, a := range p.optWS(pos) {
			for _, f := range p.from(a) {
				for _, b := range p.optWS(f.end) {
					out.add(b, f.val)
				}
			}
		}
		return out.list
	})
}

// from = entity [[ws] extract] [ws] where
func (p *parser) from(pos int) []res {
	return p.memoize(kFrom, pos, func() []res {
		var out resSet
		for _, e := range p.entity(pos) {
			type mid struct {
				end int
				ext any
			}
			var mids []mid
			for _, a := range p.optWS(e.end) {
				for _, x := range p.extract(a) {
					mids = append(mids, mid{x.end, x.val})
				}
			}
			mids = append(mids, mid{e.end, nil})
			for _, m := range mids {
				for _, b := range p.optWS(m.end) {
					for _, w := range p.where(b) {
						out.add(w.end, newFrom(e.val.(string), m.ext, w.val.([]any)))
					}
				}
			}
		}
		return out.list
	})
}

func (p *parser) entity(pos int) []res {
	return p.memoize(kEntity, pos, func() []res {
		var out []res
		for _, e := range entities {
			if p.lit(pos, e) {
				out = append(out, res{pos + len(e), e})
			}
		}
		return out
	})
}

// extract = "[" [ws] [fieldlist] [ws] "]"
func (p *parser) extract(pos int) []res {
	return p.memoize(kExtract, pos, func() []res {
		if !p.lit(pos, "[") {
			return nil
		}
		var out resSet
		for _, a := range p.optWS(pos + 1) {
			lists := cat(p.fieldList(a), []res{{a, []any{}}})
			for _, l := range lists {
				for _, b := range p.optWS(l.end) {
					if p.lit(b, "]") {
						out.add(b+1, []any{"extract", listOf(l.val)})
					}
				}
			}
		}
		return out.list
	})
}

// where = "{" [ws] [expression] [ws] [groupby | {paging [ws]}] {ws} "}"
// Its value is the list of clauses.
func (p *parser) where(pos int) []res {
	return p.memoize(kWhere, pos, func() []res {
		if !p.lit(pos, "{") {
			return nil
		}
		type part struct {
			end  int
			vals []any
		}
		var out resSet
		for _, a := range p.optWS(pos + 1) {
			var exprs []part
			for _, e := range p.exprOr(a) {
				exprs = append(exprs, part{e.end, []any{e.val}})
			}
			exprs = append(exprs, part{a, nil})
			for _, ex := range exprs {
				for _, b := range p.optWS(ex.end) {
					var tails []part
					for _, g := range p.groupBy(b) {
						tails = append(tails, part{g.end, []any{g.val}})
					}
					for _, s := range p.pagingStar(b) {
						tails = append(tails, part{s.end, s.val.([]any)})
					}
					for _, t := range tails {
						for _, c := range p.starWS(t.end) {
							if p.lit(c, "}") {
								vals := append(append([]any{}, ex.vals...), t.vals...)
								out.add(c+1, vals)
							}
						}
					}
				}
			}
		}
		return out.list
	})
}

// groupBy = "group by" ws fieldlist
func (p *parser) groupBy(pos int) []res {
	if !p.lit(pos, "group by") {
		return nil
	}
	a, ok := p.ws(pos + len("group by"))
	if !ok {
		return nil
	}
	var out []res
	for _, l := range p.fieldList(a) {
		out = append(out, res{l.end, append([]any{"group_by"}, listOf(l.val)...)})
	}
	return out
}

// pagingStar = {pagingclause [ws]}; values are the clause lists.
func (p *parser) pagingStar(pos int) []res {
	var out []res
	seen := map[int]bool{}
	var rec func(pos int, acc []any)
	rec = func(pos int, acc []any) {
		if seen[pos] {
			return
		}
		seen[pos] = true
		for _, c := range p.pagingClause(pos) {
			for _, a := range p.optWS(c.end) {
				rec(a, append(acc[:len(acc):len(acc)], c.val))
			}
		}
		out = append(out, res{pos, acc})
	}
	rec(pos, []any{})
	return out
}

// pagingclause = limit | offset | orderby
func (p *parser) pagingClause(pos int) []res {
	return p.memoize(kPaging, pos, func() []res {
		var out []res
		for _, kw := range []string{"limit", "offset"} {
			if !p.lit(pos, kw) {
				continue
			}
			if a, ok := p.ws(pos + len(kw)); ok {
				for _, n := range p.integer(a) {
					out = append(out, res{n.end, []any{kw, n.val}})
				}
			}
		}
		return append(out, p.orderBy(pos)...)
	})
}

// orderby = "order by" ws orderparam ["," [ws] orderparam]...
func (p *parser) orderBy(pos int) []res {
	if !p.lit(pos, "order by") {
		return nil
	}
	a, ok := p.ws(pos + len("order by"))
	if !ok {
		return nil
	}
	var out []res
	var rec func(pos int, acc []any)
	rec = func(pos int, acc []any) {
		if p.lit(pos, ",") { // a comma makes the shorter list a dead end
			for _, b := range p.optWS(pos + 1) {
				for _, o := range p.orderParam(b) {
					rec(o.end, append(acc[:len(acc):len(acc)], o.val))
				}
			}
			return
		}
		out = append(out, res{pos, []any{"order_by", acc}})
	}
	for _, o := range p.orderParam(a) {
		rec(o.end, []any{o.val})
	}
	return out
}

// orderparam = !("asc" | "desc") field [ws direction] [ws]
func (p *parser) orderParam(pos int) []res {
	return p.memoize(kOrderParam, pos, func() []res {
		asc := p.lit(pos, "asc")
		desc := p.lit(pos, "desc")
		if asc || desc {
			p.record(pos, reason{text: notAscDesc})
			return nil
		}
		var out []res
		for _, f := range p.field(pos) {
			type dir struct {
				end int
				dir string
			}
			var dirs []dir
			if a, ok := p.ws(f.end); ok {
				for _, d := range []string{"asc", "desc"} {
					if p.lit(a, d) {
						dirs = append(dirs, dir{a + len(d), d})
					}
				}
			}
			dirs = append(dirs, dir{f.end, ""})
			for _, d := range dirs {
				val := f.val
				if d.dir != "" {
					val = []any{f.val, d.dir}
				}
				for _, b := range p.optWS(d.end) {
					out = append(out, res{b, val})
				}
			}
		}
		return out
	})
}

// fieldlist = (field | function) {[ws] "," [ws] (field | function)}
func (p *parser) fieldList(pos int) []res {
	return p.memoize(kFieldList, pos, func() []res {
		var out []res
		items := cat(p.field(pos), p.function(pos))
		for _, it := range items {
			out = p.listTail(out, it, p.fieldList)
		}
		return out
	})
}

// field = #"[a-zA-Z0-9_]+\??" | ("facts" | "trusted" | "parameters") ("." segment)+
// where segment = quotedfield | standardfield | matchfield. The value is the
// parts joined with ".".
func (p *parser) field(pos int) []res {
	return p.memoize(kField, pos, func() []res {
		var out []res
		if end, ok := p.fieldRe(pos); ok {
			out = append(out, res{end, p.src[pos:end]})
		}
		for _, d := range []string{"facts", "trusted", "parameters"} {
			if !p.lit(pos, d) {
				continue
			}
			// ("." segment)+ : the joined parts are exactly the source
			// text, so each reachable end position is one result.
			seen := map[int]bool{}
			queue := []int{pos + len(d)}
			for len(queue) > 0 {
				at := queue[0]
				queue = queue[1:]
				if !p.lit(at, ".") {
					continue
				}
				s := at + 1
				var ends []int
				if e, ok := p.quotedField(s); ok {
					ends = append(ends, e)
				}
				if e, ok := p.standardField(s); ok {
					ends = append(ends, e)
				}
				if e, ok := p.matchField(s); ok {
					ends = append(ends, e)
				}
				for _, e := range ends {
					if !seen[e] {
						seen[e] = true
						out = append(out, res{e, p.src[pos:e]})
						queue = append(queue, e)
					}
				}
			}
		}
		return out
	})
}

// function = functionname [ws] "(" [ws] [arglist] [ws] ")"
// arglist  = (field | string) [[ws] "," [ws] string {[ws] "," [ws] string}]
func (p *parser) function(pos int) []res {
	return p.memoize(kFunction, pos, func() []res {
		var out []res
		for _, name := range functionNames {
			if !p.lit(pos, name) {
				continue
			}
			for _, a := range p.optWS(pos + len(name)) {
				if !p.lit(a, "(") {
					continue
				}
				for _, b := range p.optWS(a + 1) {
					var args []res
					for _, first := range cat(p.field(b), p.str(b)) {
						args = append(args, res{first.end, []any{first.val}})
						for _, c := range p.optWS(first.end) {
							if !p.lit(c, ",") {
								continue
							}
							for _, d := range p.optWS(c + 1) {
								for _, sl := range p.stringList(d) {
									args = append(args, res{sl.end, append([]any{first.val}, listOf(sl.val)...)})
								}
							}
						}
					}
					args = append(args, res{b, []any{}})
					for _, arg := range args {
						for _, c := range p.optWS(arg.end) {
							if p.lit(c, ")") {
								out = append(out, res{c + 1, append([]any{"function", name}, arg.val.([]any)...)})
							}
						}
					}
				}
			}
		}
		return out
	})
}

// listTail adds the parses of `item {[ws] "," [ws] item}` that start with
// the parse it: it alone, and it followed by each parse of rest after a
// comma. When the comma is there, no rule accepts it after the item, so it
// alone is a dead end and is left out (long lists stay linear).
func (p *parser) listTail(out []res, it res, rest func(int) []res) []res {
	comma := false
	var more []res
	for _, a := range p.optWS(it.end) {
		if !p.lit(a, ",") {
			continue
		}
		comma = true
		for _, b := range p.optWS(a + 1) {
			for _, r := range rest(b) {
				more = append(more, res{r.end, &cons{it.val, r.val.(*cons)}})
			}
		}
	}
	if !comma {
		out = append(out, res{it.end, &cons{it.val, nil}})
	}
	return append(out, more...)
}

// cons is a parsed list, shared between the parses that extend it: each
// parse of `a, b, c` adds a cell in front of the memoised parse of its
// tail, where copying the tail would take time and memory quadratic in
// the list's length.
type cons struct {
	head any
	tail *cons
}

// listOf is the list v (a *cons, or an empty []any) as a new slice.
func listOf(v any) []any {
	c, ok := v.(*cons)
	if !ok {
		return v.([]any)
	}
	var out []any
	for ; c != nil; c = c.tail {
		out = append(out, c.head)
	}
	return out
}

// stringList = string {[ws] "," [ws] string}
func (p *parser) stringList(pos int) []res {
	return p.memoize(kStringList, pos, func() []res {
		var out []res
		for _, s := range p.str(pos) {
			out = p.listTail(out, s, p.stringList)
		}
		return out
	})
}

// expr-or = expr-and | expr-and ws "or" ws expr-or
func (p *parser) exprOr(pos int) []res {
	return p.memoize(kOr, pos, func() []res {
		return p.binary(pos, "or", p.exprAnd, p.exprOr)
	})
}

// expr-and = expr-not | expr-not ws "and" ws expr-and
func (p *parser) exprAnd(pos int) []res {
	return p.memoize(kAnd, pos, func() []res {
		return p.binary(pos, "and", p.exprNot, p.exprAnd)
	})
}

func (p *parser) binary(pos int, op string, operand, self func(int) []res) []res {
	var out, chains []res
	operand(pos) // replayed as a GLL parser visits both alternatives
	for _, l := range operand(pos) {
		a, ok := p.ws(l.end)
		if ok && p.lit(a, op) {
			if b, ok := p.ws(a + len(op)); ok {
				for _, r := range self(b) {
					chains = append(chains, res{r.end, &chain{op: op, head: l.val, tail: r.val}})
				}
				// Nothing but this rule accepts " op " after an operand,
				// and the attempt above failed further right, so the
				// shorter parse is a dead end; dropping it keeps long
				// chains linear.
				continue
			}
		}
		out = append(out, l)
	}
	return append(out, chains...)
}

// expr-not = "!" [ws] expr-not | expr-rest
func (p *parser) exprNot(pos int) []res {
	return p.memoize(kNot, pos, func() []res {
		var out []res
		if p.lit(pos, "!") {
			for _, a := range p.optWS(pos + 1) {
				for _, r := range p.exprNot(a) {
					out = append(out, res{r.end, []any{"not", r.val}})
				}
			}
		}
		return append(out, p.exprRest(pos)...)
	})
}

// expr-rest = "(" [ws] expression [ws] ")" | condexpression | condexpnull | subquery
func (p *parser) exprRest(pos int) []res {
	return p.memoize(kRest, pos, func() []res {
		var out []res
		if p.lit(pos, "(") {
			for _, a := range p.optWS(pos + 1) {
				for _, e := range p.exprOr(a) {
					for _, b := range p.optWS(e.end) {
						if p.lit(b, ")") {
							out = append(out, res{b + 1, &group{e.val}})
						}
					}
				}
			}
		}
		out = append(out, p.condExpression(pos)...)
		out = append(out, p.condExpNull(pos)...)
		return append(out, p.subquery(pos)...)
	})
}

// condition builds the value of a condexpression from its operator.
func condition(op string, f, v any) any {
	switch op {
	case "!=":
		return []any{"not", []any{"=", f, v}}
	case "!~":
		return []any{"not", []any{"~", f, v}}
	}
	return []any{op, f, v}
}

// condexpression: the seven condition forms, in grammar order.
func (p *parser) condExpression(pos int) []res {
	return p.memoize(kCond, pos, func() []res {
		var out []res
		// lhs [ws] <one of ops> [ws] value
		form := func(lhs []res, ops []string, value func(int) []res) {
			for _, f := range lhs {
				for _, a := range p.optWS(f.end) {
					var matched []string
					for _, op := range ops {
						if p.lit(a, op) {
							matched = append(matched, op)
						}
					}
					for _, op := range matched {
						for _, b := range p.optWS(a + len(op)) {
							for _, v := range value(b) {
								out = append(out, res{v.end, condition(op, f.val, v.val)})
							}
						}
					}
				}
			}
		}
		form(p.field(pos), []string{"~"}, p.str)
		form(p.field(pos), []string{"~>"}, p.groupedRegexpList)
		form(p.field(pos), []string{">=", "<=", "<", ">"}, p.valueOrdered)
		form(p.field(pos), []string{"="}, p.literal)
		form(p.field(pos), []string{"!="}, p.literal)
		form(p.field(pos), []string{"!~"}, p.literal)
		form(cat(p.field(pos), p.groupedFieldList(pos)), []string{"in"}, p.valueIn)
		return out
	})
}

// condexpnull = field [ws] ("is null" | "is not null")
func (p *parser) condExpNull(pos int) []res {
	var out []res
	for _, f := range p.field(pos) {
		for _, a := range p.optWS(f.end) {
			if p.lit(a, "is null") {
				out = append(out, res{a + len("is null"), []any{"null?", f.val, true}})
			}
			if p.lit(a, "is not null") {
				out = append(out, res{a + len("is not null"), []any{"null?", f.val, false}})
			}
		}
	}
	return out
}

// subquery = entity [ws] where
func (p *parser) subquery(pos int) []res {
	var out []res
	for _, e := range p.entity(pos) {
		for _, a := range p.optWS(e.end) {
			for _, w := range p.where(a) {
				out = append(out, res{w.end, &subq{entity: e.val.(string), args: w.val.([]any)}})
			}
		}
	}
	return out
}

// bracketed = "[" [ws] items [ws] "]"
func (p *parser) bracketed(pos int, items func(int) []res, wrap func([]any) any) []res {
	if !p.lit(pos, "[") {
		return nil
	}
	var out []res
	for _, a := range p.optWS(pos + 1) {
		for _, l := range items(a) {
			for _, b := range p.optWS(l.end) {
				if p.lit(b, "]") {
					out = append(out, res{b + 1, wrap(listOf(l.val))})
				}
			}
		}
	}
	return out
}

func asList(l []any) any { return l }

// cat concatenates parse lists into a new slice (memoised lists are shared
// and must not be appended to).
func cat(lists ...[]res) []res {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]res, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// groupedfieldlist = "[" [ws] fieldlist [ws] "]"
func (p *parser) groupedFieldList(pos int) []res {
	return p.bracketed(pos, p.fieldList, asList)
}

// groupedregexplist = "[" [ws] string {[ws] "," [ws] string} [ws] "]"
func (p *parser) groupedRegexpList(pos int) []res {
	return p.bracketed(pos, p.stringList, asList)
}

// groupedliterallist = "[" [ws] literallist [ws] "]"  → ["array", [...]]
func (p *parser) groupedLiteralList(pos int) []res {
	return p.bracketed(pos, p.literalList, func(l []any) any { return []any{"array", l} })
}

// valuein = query | groupedliterallist
func (p *parser) valueIn(pos int) []res {
	return cat(p.query(pos), p.groupedLiteralList(pos))
}

// valueordered = integer | real | string
func (p *parser) valueOrdered(pos int) []res {
	return cat(p.integer(pos), p.real(pos), p.str(pos))
}

// literal = string | integer | real | boolean | array
func (p *parser) literal(pos int) []res {
	return p.memoize(kLiteral, pos, func() []res {
		out := cat(p.str(pos), p.integer(pos), p.real(pos))
		if p.lit(pos, "true") {
			out = append(out, res{pos + 4, true})
		}
		if p.lit(pos, "false") {
			out = append(out, res{pos + 5, false})
		}
		return append(out, p.bracketed(pos, p.literalList, asList)...)
	})
}

// literallist = literal {[ws] "," [ws] literal}
func (p *parser) literalList(pos int) []res {
	return p.memoize(kLiteralList, pos, func() []res {
		var out []res
		for _, l := range p.literal(pos) {
			out = p.listTail(out, l, p.literalList)
		}
		return out
	})
}

// string = dqstring | sqstring
func (p *parser) str(pos int) []res {
	return p.memoize(kString, pos, func() []res {
		var out []res
		if p.lit(pos, `"`) {
			end := p.quotedBody(pos+1, '"')
			if p.lit(end, `"`) {
				out = append(out, res{end + 1, &dqString{raw: p.src[pos+1 : end]}})
			}
		}
		if p.lit(pos, "'") {
			end := p.quotedBody(pos+1, '\'')
			if p.lit(end, "'") {
				out = append(out, res{end + 1, sqString(p.src[pos+1 : end])})
			}
		}
		return out
	})
}

// integer = ["-"] digits
func (p *parser) integer(pos int) []res {
	return p.memoize(kInteger, pos, func() []res {
		var out []res
		if p.lit(pos, "-") {
			if e, ok := p.digits(pos + 1); ok {
				out = append(out, res{e, integerValue(true, p.src[pos+1:e])})
			}
		}
		if e, ok := p.digits(pos); ok {
			out = append(out, res{e, integerValue(false, p.src[pos:e])})
		}
		return out
	})
}

// real = ["-"] digits "." digits [("E" | "e") ["-" | "+"] digits]
func (p *parser) real(pos int) []res {
	return p.memoize(kReal, pos, func() []res {
		var out []res
		starts := []int{}
		if p.lit(pos, "-") {
			starts = append(starts, pos+1)
		}
		starts = append(starts, pos)
		for _, s := range starts {
			d1, ok := p.digits(s)
			if !ok || !p.lit(d1, ".") {
				continue
			}
			d2, ok := p.digits(d1 + 1)
			if !ok {
				continue
			}
			var ends []int
			var es []int
			for _, e := range []string{"E", "e"} {
				if p.lit(d2, e) {
					es = append(es, d2+1)
				}
			}
			for _, e := range es {
				signs := []int{}
				for _, sg := range []string{"-", "+"} {
					if p.lit(e, sg) {
						signs = append(signs, e+1)
					}
				}
				signs = append(signs, e)
				for _, sg := range signs {
					if d3, ok := p.digits(sg); ok {
						ends = append(ends, d3)
					}
				}
			}
			ends = append(ends, d2)
			for _, end := range ends {
				out = append(out, res{end, realValue(p.src[pos:end])})
			}
		}
		return out
	})
}
