package upstream

import (
	"context"
	"errors"
	"strings"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/upstream/nodeeval"
)

// Fields are the node fields the upstream PuppetDB holds: a merged node
// takes them from the upstream, its report fields from reportdb.
var Fields = []string{"facts_timestamp", "catalog_timestamp", "catalog_environment", "facts_environment", "deactivated", "expired"}

// Local runs a plan on reportdb's own store and returns its rows.
type Local func(ctx context.Context, p *query.Plan) ([]*jsonv.Object, error)

// EngineLocal is Local through reportdb's query engine, each query bounded
// by timeout.
func EngineLocal(e *engine.Engine, timeout time.Duration) Local {
	return func(ctx context.Context, p *query.Plan) ([]*jsonv.Object, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var rows []*jsonv.Object
		err := e.Query(ctx, p, false, func(res *engine.Rows, _ int64) error {
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
		return rows, err
	}
}

// Nodes answers the nodes entity in front of an upstream PuppetDB: the
// upstream's node rows (every node state) are fetched for each query,
// merged by certname with reportdb's, and the query is evaluated on the
// merged rows (package nodeeval). Neither side can filter alone: a filter
// may test a fact field and a report field at once, node_state follows the
// upstream's deactivated and expired, and order, paging and counts run
// over the union.
type Nodes struct {
	Upstream *Client
	Local    Local
}

// localNodes is the plan of reportdb's nodes in every state, as /nodes
// answers ["=","node_state","any"]: compiled for each query, as the
// engine may resolve parts of a plan in place.
func localNodes() (*query.Plan, error) {
	q, err := jsonv.Parse([]byte(`["=","node_state","any"]`))
	if err != nil {
		return nil, err
	}
	return query.CompileEntity(query.Nodes, &query.Options{Query: q, QuerySet: true})
}

// Rows returns every node (any state) known to reportdb or the upstream,
// with report fields from reportdb and fact/catalog fields from the
// upstream, as rows in the nodes entity's output order: reportdb's nodes
// first, then the upstream's it does not know.
func (n Nodes) Rows(ctx context.Context) ([]*jsonv.Object, error) {
	plan, err := localNodes()
	if err != nil {
		return nil, err
	}
	localRows, err := n.Local(ctx, plan)
	if err != nil {
		return nil, err
	}
	upBody, err := n.Upstream.Query(ctx, "/pdb/query/v4/nodes",
		`["extract",["certname","`+strings.Join(Fields, `","`)+`"],["=","node_state","any"]]`)
	if err != nil {
		return nil, Err(err)
	}
	up, err := jsonv.Parse(upBody)
	if err != nil {
		return nil, Err(err)
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
	merge := func(row *jsonv.Object, u *jsonv.Object) {
		for _, f := range Fields {
			v, _ := u.Get(f)
			if f == "catalog_environment" && v == nil && keepCatalogEnv {
				continue
			}
			setKey(row, f, v)
		}
	}
	var rows []*jsonv.Object
	seen := map[string]bool{}
	for _, o := range localRows {
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

// Node returns the merged node certname, nil when neither side knows it.
func (n Nodes) Node(ctx context.Context, certname string) (*jsonv.Object, error) {
	rows, err := n.Rows(ctx)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if c, _ := row.Get("certname"); c == certname {
			return row, nil
		}
	}
	return nil, nil
}

// Query evaluates a nodes plan on the merged rows: the result rows, and
// their number before paging. Subqueries on the entities reportdb stores
// run through Local.
func (n Nodes) Query(ctx context.Context, plan *query.Plan) ([]any, int, error) {
	rows, err := n.Rows(ctx)
	if err != nil {
		return nil, 0, err
	}
	return nodeeval.Eval(plan, rows, func(p *query.Plan) ([]*jsonv.Object, error) { return n.Local(ctx, p) })
}

// Err turns a failure to get an answer from the upstream into the error
// reportdb answers (503: the request was valid, the server it needs is
// not answering); other errors are returned as they are.
func Err(err error) error {
	if errors.Is(err, ErrUnavailable) {
		return &reportdb.Error{Code: reportdb.EUNAVAILABLE, Message: "The upstream PuppetDB is unavailable: " + err.Error(), Err: err}
	}
	var se *StatusError
	if errors.As(err, &se) {
		return &reportdb.Error{Code: reportdb.EUNAVAILABLE, Message: "The upstream PuppetDB failed: " + se.Error(), Err: err}
	}
	return err
}
