package httpapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/pgcompat"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/pql"
	"reportdb/upstream"
)

// Upstream mode (Config.Upstream): reportdb stores reports itself and
// stands in front of an existing PuppetDB for everything else.
//
//   - /pdb/cmd/v1: "store report" is stored here; "deactivate node" is
//     recorded here, then forwarded, so that both sides agree on the
//     node's state; every other command (replace facts, replace catalog,
//     catalog inputs, configure expiration) is forwarded as received.
//   - Queries on entities reportdb does not hold (facts, catalogs,
//     resources, inventory, ..., their sub-paths, and the root endpoint's
//     ["from", <such entity>] / PQL) are forwarded; the answer is streamed
//     back (status, headers such as X-Records, body).
//   - nodes (/nodes, /nodes/<certname>, root "from nodes") are merged: the
//     report fields come from reportdb, the fact and catalog fields
//     (facts_timestamp, facts_environment, catalog_timestamp,
//     catalog_environment, deactivated, expired) from the upstream's
//     /nodes. The upstream's node rows (every node state) are fetched for
//     each such query, merged by certname with reportdb's, and the query's
//     filter, order_by, paging and extract are evaluated on the merged rows.
//     Limits: in such a nodes query, subqueries may target nodes and the
//     entities reportdb holds (reports, events, environments, producers), not
//     the forwarded ones (400); of the aggregate functions only count()
//     (with group_by) is supported.
//   - The upstream being unreachable answers 503 to what needs it; reports
//     and report queries are unaffected.

// upstreamFields are the node fields the upstream PuppetDB knows.
var upstreamFields = []string{"facts_timestamp", "catalog_timestamp", "catalog_environment", "facts_environment", "deactivated", "expired"}

// serveUpstream answers r when it is for the upstream (forwarded or merged)
// and reports whether it did.
func (s *Server) serveUpstream(w http.ResponseWriter, r *http.Request) bool {
	const v4 = "/pdb/query/v4"
	p := r.URL.Path
	switch {
	case p == "/pdb/cmd/v1":
		return s.upstreamCommand(w, r)
	case p == v4+"/nodes":
		opts, ok := s.queryOptions(w, r, KindEntity)
		if !ok {
			return true
		}
		plan, err := query.CompileEntity(query.Nodes, opts)
		if err != nil {
			s.writeError(w, r, err)
			return true
		}
		s.serveMergedNodes(w, r, plan, opts)
		return true
	case strings.HasPrefix(p, v4+"/nodes/"):
		rest := strings.TrimPrefix(p, v4+"/nodes/")
		if strings.Contains(rest, "/") {
			s.forward(w, r, nil) // /nodes/<certname>/facts|resources...
			return true
		}
		s.serveMergedNode(w, r, rest)
		return true
	case p == v4:
		return s.upstreamRoot(w, r)
	case strings.HasPrefix(p, "/metrics/v2/read/") && !strings.HasPrefix(strings.TrimPrefix(p, "/metrics/v2/read/"), populationDomain+":"):
		s.forward(w, r, nil) // the upstream's own beans (JVM, command queue, storage, ...)
		return true
	case strings.HasPrefix(p, v4+"/"):
		rest := strings.TrimPrefix(p, v4+"/")
		first, sub, _ := strings.Cut(rest, "/")
		if _, ok := emptyEndpoint[first]; ok || first == "fact-names" {
			s.forward(w, r, nil)
			return true
		}
		if first == "environments" && (strings.HasSuffix(sub, "/facts") || strings.HasSuffix(sub, "/resources")) {
			s.forward(w, r, nil)
			return true
		}
	}
	return false
}

// forward streams r to the upstream (body: a replacement for r.Body, or
// nil for r.Body itself); an unreachable upstream is a 503.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	var in io.Reader = r.Body
	if body != nil {
		in = bytes.NewReader(body)
	} else if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		in = nil
	}
	if err := s.cfg.Upstream.Forward(w, r, in); err != nil {
		s.writeError(w, r, upstreamError(err))
	}
}

func upstreamError(err error) error {
	if errors.Is(err, upstream.ErrUnavailable) {
		return &reportdb.Error{Code: reportdb.EUNAVAILABLE, Message: "The upstream PuppetDB is unavailable: " + err.Error(), Err: err}
	}
	var se *upstream.StatusError
	if errors.As(err, &se) {
		return &reportdb.Error{Code: reportdb.EUNAVAILABLE, Message: "The upstream PuppetDB failed: " + se.Error(), Err: err}
	}
	return err
}

// upstreamCommand forwards every command but "store report".
func (s *Server) upstreamCommand(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	if name := r.URL.Query().Get("command"); name != "" {
		if storedHere(name) {
			return false // handleCommand (which forwards a deactivation once it is recorded)
		}
		s.forward(w, r, nil)
		return true
	}
	// the envelope form names the command in the body
	raw, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil || int64(len(raw)) > s.cfg.MaxBodyBytes {
		return false // handleCommand reports it
	}
	plain := raw
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("Content-Encoding")), "gzip") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return false
		}
		if plain, err = io.ReadAll(io.LimitReader(zr, s.cfg.MaxBodyBytes+1)); err != nil {
			return false
		}
	}
	v, err := jsonv.Parse(plain)
	o, ok := v.(*jsonv.Object)
	if err != nil || !ok {
		return false
	}
	name, _ := o.Get("command")
	if n, ok := name.(string); !ok || storedHere(n) {
		return false
	}
	s.forward(w, r, raw)
	return true
}

// storedHere reports whether a command is handleCommand's: a report, or
// a deactivation (recorded here, then forwarded).
func storedHere(name string) bool {
	n := normalizeCommand(name)
	return n == "store report" || n == "deactivate node"
}

func normalizeCommand(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", " "))
}

// upstreamRoot routes a root query by its entity: forwarded entities go
// upstream, nodes are merged, the rest is answered here.
func (s *Server) upstreamRoot(w http.ResponseWriter, r *http.Request) bool {
	var raw []byte
	if r.Body != nil && r.Method == http.MethodPost {
		b, err := readAll(r.Body, s.cfg.MaxQueryBodyBytes)
		if err != nil {
			s.writeError(w, r, err)
			return true
		}
		raw = b
		r.Body = io.NopCloser(bytes.NewReader(raw))
	}
	restore := func() {
		if raw != nil {
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
	}
	params, err := s.readParams(r)
	restore()
	if err != nil {
		return false
	}
	opts, err := parseOptions(KindRoot, params)
	if err != nil || opts.ASTOnly {
		return false
	}
	ast := opts.Query
	if opts.QuerySet && opts.Query == nil && query.RootQueryIsPQL(opts.QueryText) {
		if ast, err = pql.Parse(opts.QueryText); err != nil {
			return false
		}
	}
	arr, ok := ast.([]any)
	if !ok || len(arr) < 2 || arr[0] != "from" {
		return false
	}
	name, _ := arr[1].(string)
	e := query.Lookup(strings.ReplaceAll(name, "-", "_"))
	switch {
	case e == nil:
		return false
	case !e.Exists:
		s.forward(w, r, raw)
		return true
	case e == query.Nodes:
		plan, err := query.CompileRoot(ast, opts)
		if err != nil {
			s.writeError(w, r, err)
			return true
		}
		s.serveMergedNodes(w, r, plan, opts)
		return true
	}
	return false
}

// mergedNodeRows returns every node (any state) known to reportdb or the
// upstream, with report fields from reportdb and fact/catalog fields from
// the upstream, as rows in the nodes entity's output order.
func (s *Server) mergedNodeRows(r *http.Request) ([]*jsonv.Object, error) {
	localBody, err := s.internalGet(r, "/pdb/query/v4/nodes", map[string][]string{"query": {`["=","node_state","any"]`}})
	if err != nil {
		return nil, err
	}
	local, err := jsonv.Parse(localBody)
	if err != nil {
		return nil, err
	}
	upBody, err := s.cfg.Upstream.Query(r.Context(), "/pdb/query/v4/nodes",
		`["extract",["certname","`+strings.Join(upstreamFields, `","`)+`"],["=","node_state","any"]]`)
	if err != nil {
		return nil, upstreamError(err)
	}
	up, err := jsonv.Parse(upBody)
	if err != nil {
		return nil, upstreamError(err)
	}
	upRows, _ := up.([]any)
	byName := map[string]*jsonv.Object{}
	for _, x := range upRows {
		if o, ok := x.(*jsonv.Object); ok {
			if c, ok := o.Get("certname"); ok {
				if cs, ok := c.(string); ok {
					byName[cs] = o
				}
			}
		}
	}
	keepCatalogEnv := query.CatalogEnvironmentFromReports()
	var rows []*jsonv.Object
	seen := map[string]bool{}
	merge := func(row *jsonv.Object, u *jsonv.Object) {
		for _, f := range upstreamFields {
			v, _ := u.Get(f)
			if f == "catalog_environment" && v == nil && keepCatalogEnv {
				continue
			}
			setKey(row, f, v)
		}
	}
	localRows, _ := local.([]any)
	for _, x := range localRows {
		o, ok := x.(*jsonv.Object)
		if !ok {
			continue
		}
		c, _ := o.Get("certname")
		cs, _ := c.(string)
		seen[cs] = true
		if u := byName[cs]; u != nil {
			merge(o, u)
		}
		rows = append(rows, o)
	}
	for _, x := range upRows {
		u, ok := x.(*jsonv.Object)
		if !ok {
			continue
		}
		c, _ := u.Get("certname")
		cs, _ := c.(string)
		if seen[cs] {
			continue
		}
		seen[cs] = true
		row := &jsonv.Object{Keys: query.Nodes.Output, Values: make([]any, len(query.Nodes.Output))}
		setKey(row, "certname", cs)
		merge(row, u)
		rows = append(rows, row)
	}
	return rows, nil
}

func setKey(o *jsonv.Object, k string, v any) {
	for i, key := range o.Keys {
		if key == k {
			o.Values[i] = v
			return
		}
	}
	o.Keys = append(o.Keys, k)
	o.Values = append(o.Values, v)
}

// serveMergedNode serves /nodes/<certname> in upstream mode.
func (s *Server) serveMergedNode(w http.ResponseWriter, r *http.Request, name string) {
	if err := checkSingleParams(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := s.mergedNodeRows(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, row := range rows {
		if c, _ := row.Get("certname"); c == name {
			writePretty(w, http.StatusOK, row)
			return
		}
	}
	s.writeError(w, r, notFound("node", name))
}

// serveMergedNodes evaluates a nodes plan on the merged rows.
func (s *Server) serveMergedNodes(w http.ResponseWriter, r *http.Request, plan *query.Plan, opts *query.Options) {
	rows, err := s.mergedNodeRows(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, total, err := s.evalNodesPlan(r, plan, rows)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	n := int64(-1)
	if opts.IncludeTotal {
		n = int64(total)
	}
	s.respond(w, r, func(send sender) error { return send(&list{values: out}, n, opts.Pretty) })
}

// evalNodesPlan filters, aggregates, orders, pages and projects rows; total
// is the number of result rows before paging.
func (s *Server) evalNodesPlan(r *http.Request, plan *query.Plan, rows []*jsonv.Object) ([]any, int, error) {
	ev := &nodeEval{s: s, r: r, rows: rows}
	var kept []*jsonv.Object
	for _, row := range rows {
		t, err := ev.eval(plan.Filter, row)
		if err != nil {
			return nil, 0, err
		}
		if t == triTrue {
			kept = append(kept, row)
		}
	}
	aggregate := false
	for _, c := range plan.Columns {
		if c.IsFunc() {
			if c.Func != "count" {
				return nil, 0, reportdb.Errorf(reportdb.EINVALID, "With an upstream PuppetDB, nodes queries support only the count() function, not %s()", c.Func)
			}
			aggregate = true
		}
	}
	if aggregate {
		kept = groupCount(plan, kept)
	}
	sort.SliceStable(kept, func(i, j int) bool {
		for _, o := range plan.OrderBy {
			if o.Field == nil {
				continue
			}
			c := compareNullsLast(normValue(o.Field, rowValue(kept[i], o.Field.Name)), normValue(o.Field, rowValue(kept[j], o.Field.Name)))
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	total := len(kept)
	if plan.Offset > 0 {
		if int(plan.Offset) >= len(kept) {
			kept = nil
		} else {
			kept = kept[plan.Offset:]
		}
	}
	if plan.Limit > 0 && int(plan.Limit) < len(kept) {
		kept = kept[:plan.Limit]
	}
	out := make([]any, len(kept))
	for i, row := range kept {
		if plan.Columns == nil || aggregate {
			out[i] = row
			continue
		}
		o := &jsonv.Object{}
		for _, c := range plan.Columns {
			o.Keys = append(o.Keys, c.Name)
			o.Values = append(o.Values, rowValue(row, c.Field.Name))
		}
		out[i] = o
	}
	return out, total, nil
}

// groupCount turns rows into count rows: one per group_by tuple (in first
// appearance order), keys in column order.
func groupCount(plan *query.Plan, rows []*jsonv.Object) []*jsonv.Object {
	type group struct {
		key   []any
		count int64
	}
	var groups []*group
	index := map[string]*group{}
	for _, row := range rows {
		var key []any
		for _, g := range plan.GroupBy {
			key = append(key, rowValue(row, g.Name))
		}
		k := tupleKey(key)
		g := index[k]
		if g == nil {
			g = &group{key: key}
			index[k] = g
			groups = append(groups, g)
		}
		g.count++
	}
	if len(groups) == 0 && len(plan.GroupBy) == 0 {
		groups = []*group{{}}
	}
	out := make([]*jsonv.Object, len(groups))
	for i, g := range groups {
		o := &jsonv.Object{}
		for _, c := range plan.Columns {
			o.Keys = append(o.Keys, c.Name)
			if c.Func == "count" {
				o.Values = append(o.Values, jsonv.Number(strconv.FormatInt(g.count, 10)))
				continue
			}
			for gi, gb := range plan.GroupBy {
				if gb.Name == c.Name {
					o.Values = append(o.Values, g.key[gi])
				}
			}
		}
		out[i] = o
	}
	return out
}

// tupleKey is a map key for a tuple of normalized values.
func tupleKey(vals []any) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String()
}

func rowValue(row *jsonv.Object, name string) any {
	v, _ := row.Get(name)
	return v
}

// normValue turns a JSON value of field f into a comparable Go value:
// timestamps to Unix ms, numbers to float64.
func normValue(f *query.Field, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if f != nil && f.Type == query.Timestamp {
			if ms, ok := query.ParseTimestampValue(x); ok {
				return float64(ms)
			}
		}
		return x
	case jsonv.Number:
		n, _ := strconv.ParseFloat(string(x), 64)
		return n
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return v
}

// compare orders two normalized non-nil values of one type.
func compare(a, b any) int {
	switch x := a.(type) {
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	case float64:
		y, _ := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case bool:
		y, _ := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return strings.Compare(jsonv.Compact(a), jsonv.Compact(b))
}

// compareNullsLast is PostgreSQL's ascending order: NULLs last (and so
// first when descending).
func compareNullsLast(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return compare(a, b)
}

type tri int

const (
	triFalse tri = iota
	triTrue
	triUnknown // SQL NULL
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

type nodeEval struct {
	s    *Server
	r    *http.Request
	rows []*jsonv.Object
	subs map[*query.Plan]map[string]bool
}

// eval evaluates a filter on a merged node row with SQL's three-valued logic.
func (ev *nodeEval) eval(x query.Expr, row *jsonv.Object) (tri, error) {
	switch e := x.(type) {
	case nil:
		return triTrue, nil
	case query.Const:
		return triOf(e.Value), nil
	case query.And:
		res := triTrue
		for _, a := range e.Args {
			t, err := ev.eval(a, row)
			if err != nil {
				return 0, err
			}
			if t == triFalse {
				return triFalse, nil
			}
			if t == triUnknown {
				res = triUnknown
			}
		}
		return res, nil
	case query.Or:
		res := triFalse
		for _, a := range e.Args {
			t, err := ev.eval(a, row)
			if err != nil {
				return 0, err
			}
			if t == triTrue {
				return triTrue, nil
			}
			if t == triUnknown {
				res = triUnknown
			}
		}
		return res, nil
	case query.Not:
		t, err := ev.eval(e.X, row)
		switch {
		case err != nil:
			return 0, err
		case t == triUnknown:
			return triUnknown, nil
		}
		return triOf(t == triFalse), nil
	case query.IsNull:
		return triOf((rowValue(row, e.Field.Name) == nil) == e.Null), nil
	case query.Cmp:
		v := normValue(e.Field, rowValue(row, e.Field.Name))
		if v == nil {
			return triUnknown, nil
		}
		c := compare(v, normValue(e.Field, e.Value))
		switch e.Op {
		case "=":
			return triOf(c == 0), nil
		case "<":
			return triOf(c < 0), nil
		case "<=":
			return triOf(c <= 0), nil
		case ">":
			return triOf(c > 0), nil
		case ">=":
			return triOf(c >= 0), nil
		}
		return 0, reportdb.Errorf(reportdb.EINVALID, "operator %s is not supported on nodes with an upstream PuppetDB", e.Op)
	case query.Match:
		v, ok := rowValue(row, e.Field.Name).(string)
		if !ok {
			return triUnknown, nil
		}
		re, err := pgcompat.CompileRegex(e.Pattern)
		if err != nil {
			return 0, reportdb.Invalid("ERROR: " + err.Error())
		}
		return triOf(re.MatchString(v)), nil
	case query.InValues:
		v := normValue(e.Field, rowValue(row, e.Field.Name))
		if v == nil {
			return triUnknown, nil
		}
		for _, c := range e.Values {
			if compare(v, normValue(e.Field, c)) == 0 {
				return triTrue, nil
			}
		}
		return triFalse, nil
	case query.NodeState:
		active := rowValue(row, "deactivated") == nil && rowValue(row, "expired") == nil
		return triOf(active == e.Active), nil
	case query.InQuery:
		set, err := ev.subquery(e.Sub)
		if err != nil {
			return 0, err
		}
		var key []any
		for _, f := range e.Fields {
			v := rowValue(row, f.Name)
			if v == nil {
				return triUnknown, nil
			}
			key = append(key, normValue(f, v))
		}
		return triOf(set[tupleKey(key)]), nil
	}
	return 0, reportdb.Errorf(reportdb.EINVALID, "this filter is not supported on nodes with an upstream PuppetDB")
}

// subquery evaluates an "in" subquery once: on the merged nodes, or on an
// entity reportdb holds through its own executor.
func (ev *nodeEval) subquery(p *query.Plan) (map[string]bool, error) {
	if set, ok := ev.subs[p]; ok {
		return set, nil
	}
	var rows []*jsonv.Object
	switch {
	case p.Entity == query.Nodes:
		out, _, err := ev.s.evalNodesPlan(ev.r, p, ev.rows)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			rows = append(rows, o.(*jsonv.Object))
		}
	case p.Entity.Exists:
		ctx, cancel := ev.s.queryContext(ev.r)
		defer cancel()
		err := ev.s.engine.Query(ctx, p, false, func(res *engine.Rows, _ int64) error {
			var buf []byte
			for res.Next() {
				var err error
				if buf, err = res.AppendJSON(buf[:0]); err != nil {
					return err
				}
				v, err := jsonv.Parse(buf)
				if err != nil {
					return err
				}
				if o, ok := v.(*jsonv.Object); ok {
					rows = append(rows, o)
				}
			}
			return res.Err()
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, reportdb.Errorf(reportdb.EINVALID, "With an upstream PuppetDB, a nodes query cannot hold a subquery on %s (it lives upstream); query the upstream's entity at its own endpoint", p.Entity.Name)
	}
	set := map[string]bool{}
	for _, o := range rows {
		var key []any
		for _, c := range p.Columns {
			key = append(key, normValue(c.Field, rowValue(o, c.Name)))
		}
		set[tupleKey(key)] = true
	}
	if ev.subs == nil {
		ev.subs = map[*query.Plan]map[string]bool{}
	}
	ev.subs[p] = set
	return set, nil
}
