// Package jolokia serves PuppetDB's metrics API v2 (/metrics/v2, Jolokia)
// for the population beans Puppetboard reads (its overview and radiator for
// all environments, its Metrics page), computed from reportdb's own data
// through the query service:
//
//	num-nodes, num-active-nodes  active nodes (as /nodes lists them)
//	num-inactive-nodes           deactivated or expired nodes
//	num-resources                sum over active nodes of their latest report's resources/total metric
//	avg-resources-per-node       num-resources / num-nodes (an integer, or a ratio "a/b" as PuppetDB renders Clojure's)
//
// Supported Jolokia requests: GET read/<mbean>[/<attribute>] (also the
// pattern puppetlabs.puppetdb.population:*), list[/<path>], search/<pattern>,
// and POST of one request object or an array of them. Answers have
// Jolokia's shape, with errors carried in the body under HTTP 200 as
// Jolokia does. The values are computed at most once per populationTTL.
package jolokia

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"reportdb"
	"reportdb/service"
)

// PopulationDomain is the domain of the population beans (the only beans
// served here; in front of an upstream PuppetDB the others are its).
const PopulationDomain = "puppetlabs.puppetdb.population"

// populationTTL is how long computed values are answered again.
const populationTTL = 10 * time.Second

var populationBeans = []string{"num-nodes", "num-inactive-nodes", "avg-resources-per-node", "num-active-nodes", "num-resources"}

// Querier answers root queries (service.Service is one).
type Querier interface {
	Query(ctx context.Context, req service.Request, fn func(row json.RawMessage) error) (total int, err error)
}

// Options configure the handler.
type Options struct {
	// Nodes answers the node counts: the query service, or in front of an
	// upstream PuppetDB one that merges the upstream's nodes in.
	Nodes Querier
	// Reports answers the latest reports' resources (reportdb's own).
	Reports Querier
	// Version is the PuppetDB version the version request reports.
	Version string
	// Now returns the current time (tests inject it; default time.Now).
	Now func() time.Time
	// WriteError answers a request whose body cannot be read (the API's
	// error mapping).
	WriteError func(w http.ResponseWriter, r *http.Request, err error)
}

// Handler serves /metrics/v2 and the paths under it.
type Handler struct {
	o Options

	mu     sync.Mutex // held while the values are computed
	at     time.Time
	values map[string]any
}

// New returns the handler.
func New(o Options) *Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{o: o}
}

// jolokiaRequest is one Jolokia request (the POST form; GET paths are
// turned into one).
type jolokiaRequest struct {
	Type      string `json:"type"`
	MBean     string `json:"mbean,omitempty"`
	Attribute any    `json:"attribute,omitempty"`
	Path      string `json:"path,omitempty"`
}

// maxBody bounds a POSTed request (a batch of a few hundred requests).
const maxBody = 1 << 20

// ServeHTTP answers a Jolokia request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var reqs []jolokiaRequest
	batch := false
	switch r.Method {
	case http.MethodGet:
		req, errv := parseJolokiaPath(strings.TrimPrefix(strings.TrimPrefix(r.URL.EscapedPath(), "/metrics/v2"), "/"))
		if errv != nil {
			writeJolokia(w, errv)
			return
		}
		reqs = []jolokiaRequest{req}
	case http.MethodPost:
		body, err := readBody(r.Body)
		if err != nil {
			h.o.WriteError(w, r, err)
			return
		}
		body = bytes.TrimSpace(body)
		if len(body) > 0 && body[0] == '[' {
			batch = true
			err = json.Unmarshal(body, &reqs)
		} else {
			var one jolokiaRequest
			err = json.Unmarshal(body, &one)
			reqs = []jolokiaRequest{one}
		}
		if err != nil {
			writeJolokia(w, jolokiaError(400, "java.lang.IllegalArgumentException", "Invalid JSON request: "+err.Error()))
			return
		}
	default:
		writeJolokia(w, jolokiaError(400, "java.lang.IllegalArgumentException", "HTTP method "+r.Method+" is not supported"))
		return
	}
	out := []any{} // an empty batch answers [], as Jolokia does
	for _, q := range reqs {
		out = append(out, h.answer(r.Context(), q))
	}
	if batch {
		writeJolokia(w, out)
		return
	}
	writeJolokia(w, out[0])
}

// parseJolokiaPath turns read/<mbean>[/<attr>], list[/<path>],
// search/<pattern> into a request, unescaping Jolokia's !/ !! !" escapes.
func parseJolokiaPath(p string) (jolokiaRequest, any) {
	parts := splitJolokia(p)
	if len(parts) == 0 || parts[0] == "" {
		return jolokiaRequest{Type: "version"}, nil
	}
	typ := strings.ToLower(parts[0])
	args := parts[1:]
	switch typ {
	case "read":
		if len(args) == 0 || args[0] == "" {
			return jolokiaRequest{}, jolokiaError(400, "java.lang.IllegalArgumentException", "Invalid arguments in pathinfo /read for command READ")
		}
		q := jolokiaRequest{Type: "read", MBean: args[0]}
		if len(args) > 1 && args[1] != "" {
			q.Attribute = args[1]
		}
		return q, nil
	case "list":
		return jolokiaRequest{Type: "list", Path: strings.Join(args, "/")}, nil
	case "search":
		if len(args) == 0 {
			return jolokiaRequest{}, jolokiaError(400, "java.lang.IllegalArgumentException", "Invalid arguments in pathinfo /search for command SEARCH")
		}
		return jolokiaRequest{Type: "search", MBean: args[0]}, nil
	case "version":
		return jolokiaRequest{Type: "version"}, nil
	}
	return jolokiaRequest{}, jolokiaError(400, "java.lang.IllegalArgumentException", "No type with name '"+parts[0]+"' exists")
}

// splitJolokia splits an escaped URL path on unescaped slashes.
func splitJolokia(p string) []string {
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '!' && i+1 < len(p) {
			i++
			cur.WriteByte(p[i])
			continue
		}
		if c == '/' {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	if cur.Len() > 0 || len(parts) > 0 {
		parts = append(parts, cur.String())
	}
	return parts
}

func jolokiaError(status int, typ, msg string) map[string]any {
	return map[string]any{"error_type": typ, "error": typ + " : " + msg, "status": status}
}

func (h *Handler) answer(ctx context.Context, q jolokiaRequest) any {
	now := h.o.Now().Unix()
	request := orderedJSON{{"type", q.Type}}
	switch q.Type {
	case "read":
		request = orderedJSON{{"mbean", q.MBean}}
		if q.Attribute != nil {
			request = append(request, kv{"attribute", q.Attribute})
		}
		request = append(request, kv{"type", "read"})
	case "list":
		if q.Path != "" {
			request = orderedJSON{{"path", q.Path}, {"type", "list"}}
		}
	case "search":
		request = orderedJSON{{"mbean", q.MBean}, {"type", "search"}}
	}
	fail := func(status int, typ, msg string) any {
		e := jolokiaError(status, typ, msg)
		return orderedJSON{{"request", request}, {"error_type", e["error_type"]}, {"error", e["error"]}, {"status", status}}
	}
	ok := func(v any) any {
		return orderedJSON{{"request", request}, {"value", v}, {"timestamp", now}, {"status", 200}}
	}
	switch q.Type {
	case "version":
		return ok(orderedJSON{{"agent", "1.7.1"}, {"protocol", "7.2"}, {"info", orderedJSON{{"product", "reportdb"}, {"version", h.o.Version}}}})
	case "search":
		domain, pattern, _ := strings.Cut(q.MBean, ":")
		var names []string
		if domain == PopulationDomain || domain == "*" {
			for _, b := range populationBeans {
				if pattern == "*" || pattern == "name="+b || pattern == "name=*" {
					names = append(names, PopulationDomain+":name="+b)
				}
			}
		}
		if names == nil {
			names = []string{}
		}
		return ok(names)
	case "list":
		beans := orderedJSON{}
		for _, b := range populationBeans {
			beans = append(beans, kv{"name=" + b, gaugeInfo()})
		}
		switch q.Path {
		case "":
			return ok(orderedJSON{{PopulationDomain, beans}})
		case PopulationDomain:
			return ok(beans)
		}
		for _, b := range populationBeans {
			if q.Path == PopulationDomain+"/name="+b {
				return ok(gaugeInfo())
			}
		}
		return fail(404, "java.lang.IllegalArgumentException", "Illegal path element "+q.Path)
	case "read":
		vals, err := h.populationValues(ctx)
		if err != nil {
			return fail(500, "java.lang.IllegalStateException", err.Error())
		}
		if q.MBean == PopulationDomain+":*" || q.MBean == PopulationDomain+":name=*" {
			all := orderedJSON{}
			for _, b := range populationBeans {
				all = append(all, kv{PopulationDomain + ":name=" + b, orderedJSON{{"Value", vals[b]}}})
			}
			return ok(all)
		}
		domain, props, found := strings.Cut(q.MBean, ":")
		if !found || props == "" {
			e := jolokiaError(400, "java.lang.IllegalArgumentException", "Invalid object name. Key properties cannot be empty")
			return orderedJSON{{"error_type", e["error_type"]}, {"error", e["error"]}, {"status", 400}} // no request, as Jolokia
		}
		name := strings.TrimPrefix(props, "name=")
		v, known := vals[name]
		if domain != PopulationDomain || !known || !strings.HasPrefix(props, "name=") {
			return fail(404, "javax.management.InstanceNotFoundException", q.MBean)
		}
		switch q.Attribute {
		case nil, "":
			return ok(orderedJSON{{"Value", v}})
		case "Value":
			return ok(v)
		}
		return fail(404, "javax.management.AttributeNotFoundException", fmt.Sprintf("No such attribute: %v", q.Attribute))
	}
	return fail(400, "java.lang.IllegalArgumentException", "No type with name '"+q.Type+"' exists")
}

func gaugeInfo() orderedJSON {
	return orderedJSON{
		{"op", orderedJSON{{"objectName", orderedJSON{{"args", []any{}}, {"ret", "javax.management.ObjectName"}, {"desc", "Operation exposed for management"}}}}},
		{"attr", orderedJSON{{"Value", orderedJSON{{"rw", false}, {"type", "java.lang.Object"}, {"desc", "Attribute exposed for management"}}}}},
		{"class", "com.codahale.metrics.JmxReporter$JmxGauge"},
		{"desc", "Information on the management interface of the MBean"},
	}
}

// populationValues computes the population gauges through the query
// service (cached for populationTTL).
func (h *Handler) populationValues(ctx context.Context) (map[string]any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.values != nil && h.o.Now().Sub(h.at) < populationTTL {
		return h.values, nil
	}
	// the labels name what the API served these counts from, for the
	// message of a failure
	active, err := count(ctx, h.o.Nodes, "/pdb/query/v4/nodes", []any{"from", "nodes", []any{"extract", []any{[]any{"function", "count"}}}})
	if err != nil {
		return nil, err
	}
	inactive, err := count(ctx, h.o.Nodes, "/pdb/query/v4", []any{"from", "nodes", []any{"extract", []any{[]any{"function", "count"}},
		[]any{"=", "node_state", "inactive"}}})
	if err != nil {
		return nil, err
	}
	resources, err := latestResourcesTotal(ctx, h.o.Reports)
	if err != nil {
		return nil, err
	}
	var avg any = int64(0)
	if active > 0 {
		rat := big.NewRat(resources, active)
		if rat.IsInt() {
			avg = rat.Num().Int64()
		} else {
			avg = rat.String()
		}
	}
	h.values = map[string]any{"num-nodes": active, "num-active-nodes": active, "num-inactive-nodes": inactive,
		"num-resources": resources, "avg-resources-per-node": avg}
	h.at = h.o.Now()
	return h.values, nil
}

// failed is a query's failure as the gauges report it: where, the
// status and the message the API answers.
func failed(label string, err error) error {
	var e *service.Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s: %d %s", label, e.Status, e.Message)
	}
	return fmt.Errorf("%s: %v", label, err)
}

// count runs a count() query.
func count(ctx context.Context, q Querier, label string, ast any) (int64, error) {
	var rows []struct{ Count int64 }
	_, err := q.Query(ctx, service.Request{Query: ast}, func(row json.RawMessage) error {
		var r struct{ Count int64 }
		if err := json.Unmarshal(row, &r); err != nil {
			return fmt.Errorf("%s: unexpected count answer %s", label, row)
		}
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return 0, failed(label, err)
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("%s: unexpected count answer of %d rows", label, len(rows))
	}
	return rows[0].Count, nil
}

// latestResourcesTotal sums the resources/total metric of the latest
// reports of the active nodes, a report at a time.
func latestResourcesTotal(ctx context.Context, q Querier) (int64, error) {
	var sum int64
	_, err := q.Query(ctx, service.Request{Query: []any{"from", "reports", []any{"extract", []any{"metrics"},
		[]any{"and", []any{"=", "latest_report?", true},
			[]any{"in", "certname", []any{"extract", "certname", []any{"select_nodes", []any{"=", "node_state", "active"}}}}}}}},
		func(row json.RawMessage) error {
			var r struct {
				Metrics struct {
					Data []struct {
						Category, Name string
						Value          json.Number
					}
				}
			}
			if err := json.Unmarshal(row, &r); err != nil {
				return fmt.Errorf("reports metrics: %v", err)
			}
			for _, m := range r.Metrics.Data {
				if m.Category == "resources" && m.Name == "total" {
					if n, err := m.Value.Int64(); err == nil {
						sum += n
					} else if f, err := m.Value.Float64(); err == nil {
						sum += int64(f)
					}
				}
			}
			return nil
		})
	if err != nil {
		var e *service.Error
		if errors.As(err, &e) {
			return 0, failed("/pdb/query/v4/reports", err)
		}
		return 0, err
	}
	return sum, nil
}

// readBody reads a POSTed request within maxBody, failing as the API
// does for a body it cannot read or one too large.
func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return nil, reportdb.Errorf(reportdb.EINVALID, "Could not read the request body: %v", err)
	}
	if len(b) > maxBody {
		return nil, reportdb.Errorf(reportdb.ETOOLARGE, "The request body exceeds the limit of %d bytes", maxBody)
	}
	return b, nil
}

// kv and orderedJSON render JSON objects in a fixed key order.
type kv struct {
	k string
	v any
}

type orderedJSON []kv

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJolokia writes v as Jolokia does: HTTP 200 (errors are in the
// body), no-cache headers, slashes escaped as \/.
func writeJolokia(w http.ResponseWriter, v any) {
	if m, ok := v.(map[string]any); ok { // a bare error: keys in Jolokia's order
		v = orderedJSON{{"error_type", m["error_type"]}, {"error", m["error"]}, {"status", m["status"]}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error_type":"java.lang.IllegalStateException","error":"internal error","status":500}`)
	}
	b = bytes.ReplaceAll(b, []byte("/"), []byte(`\/`))
	h := w.Header()
	h.Set("Content-Type", "application/json;charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}
