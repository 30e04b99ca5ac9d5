package httpapi

import (
	"net/http"
	"strconv"

	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

func (s *Server) handleEventCounts(w http.ResponseWriter, r *http.Request) {
	opts, ok := s.queryOptions(w, r, query.KindEventCounts)
	if !ok {
		return
	}
	p, err := query.CompileEventCounts(opts, s.cfg.CorrectiveCounts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d := s.backend.Dialect()
	built, err := sqlgen.EventCounts(d, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var count *sqlgen.Built
	if opts.IncludeTotal {
		if count, err = sqlgen.EventCountsTotal(d, p); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.runQuery(w, r, built, count, func(rows store.Rows, total int64, started *bool) error {
		*started = true // writeRows sends the status before the first row
		return s.streamCounts(w, r, rows, p, total, opts.Pretty)
	})
}

// queryOptions reads and validates the parameters of a query endpoint.
func (s *Server) queryOptions(w http.ResponseWriter, r *http.Request, kind query.Kind) (*query.Options, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		s.writeError(w, r, errMethod)
		return nil, false
	}
	params, err := s.readParams(r)
	if err == nil && s.v3(r) {
		params, err = v3Params(params)
	}
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	opts, err := query.ParseOptions(kind, params)
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	return opts, true
}

// streamCounts writes event-counts rows:
// {"failures":0,"skips":0,"successes":1,"noops":0,"subject_type":"resource","subject":{"type":..,"title":..}}.
func (s *Server) streamCounts(w http.ResponseWriter, r *http.Request, rows store.Rows, p *query.CountsPlan, total int64, pretty bool) error {
	subject := query.SubjectColumns(p.SummarizeBy)
	counts := query.CountColumns(p.Corrective)
	vals := make([]any, len(subject)+len(counts))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if total >= 0 {
		w.Header().Set("X-Records", strconv.FormatInt(total, 10))
	}
	return writeRows(w, r, pretty, func() (any, bool, error) {
		if !rows.Next() {
			return nil, false, rows.Err()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, false, err
		}
		o := &jsonv.Object{}
		for i, c := range counts {
			o.Keys = append(o.Keys, c)
			o.Values = append(o.Values, int64Value(vals[len(subject)+i]))
		}
		sub := &jsonv.Object{}
		if p.SummarizeBy == "resource" {
			sub.Keys = []string{"type", "title"}
			sub.Values = []any{textValue(vals[0]), textValue(vals[1])}
		} else {
			sub.Keys = []string{"title"}
			sub.Values = []any{textValue(vals[0])}
		}
		o.Keys = append(o.Keys, "subject_type", "subject")
		o.Values = append(o.Values, p.SummarizeBy, sub)
		return o, true, nil
	})
}

func int64Value(v any) jsonv.Number {
	if n, ok := asInt(v); ok {
		return jsonv.Number(strconv.FormatInt(n, 10))
	}
	switch x := v.(type) {
	case float64:
		return jsonv.Number(strconv.FormatInt(int64(x), 10))
	case string:
		return jsonv.Number(x)
	case []byte:
		return jsonv.Number(x)
	}
	return "0"
}

func textValue(v any) any {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return nil
}

// writeRows streams a JSON array of values produced by next.
func writeRows(w http.ResponseWriter, r *http.Request, pretty bool, next func() (any, bool, error)) error {
	w.Header().Set("Content-Type", ctJSON)
	out := newBody(w, r)
	w.WriteHeader(http.StatusOK)
	defer out.Close()
	n := 0
	var buf []byte
	if pretty {
		out.WriteString("[ ")
	} else {
		out.WriteByte('[')
	}
	for {
		v, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		buf = buf[:0]
		if n > 0 {
			if pretty {
				buf = append(buf, ", "...)
			} else {
				buf = append(buf, ',')
			}
		}
		if pretty {
			buf = jsonv.AppendPretty(buf, v)
		} else {
			buf = jsonv.AppendCompact(buf, v)
		}
		if _, err := out.Write(buf); err != nil {
			return err
		}
		n++
	}
	switch {
	case pretty && n == 0:
		out.WriteString("]")
	case pretty:
		out.WriteString(" ]")
	default:
		out.WriteByte(']')
	}
	return nil
}

func (s *Server) handleAggregate(w http.ResponseWriter, r *http.Request) {
	opts, ok := s.queryOptions(w, r, query.KindAggregate)
	if !ok {
		return
	}
	ap, err := query.CompileAggregate(opts, s.cfg.CorrectiveCounts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d := s.backend.Dialect()
	var builts []*sqlgen.Built
	for _, p := range ap.Pieces {
		b, err := sqlgen.Aggregate(d, p)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		builts = append(builts, b)
	}
	ctx, cancel := s.queryContext(r)
	defer cancel()
	var result []any
	err = s.backend.Snapshot(ctx, func(q store.Querier) error {
		for i, b := range builts {
			p := ap.Pieces[i]
			counts := query.CountColumns(p.Corrective)
			vals := make([]any, len(counts)+1)
			dest := make([]any, len(vals))
			for j := range vals {
				dest[j] = &vals[j]
			}
			rows, err := q.Query(ctx, b.SQL, b.Args)
			if err != nil {
				return err
			}
			if rows.Next() {
				err = rows.Scan(dest...)
			}
			if err == nil {
				err = rows.Err()
			}
			rows.Close()
			if err != nil {
				return err
			}
			o := &jsonv.Object{Keys: []string{"summarize_by"}, Values: []any{p.SummarizeBy}}
			for j, c := range counts {
				o.Keys = append(o.Keys, c)
				o.Values = append(o.Values, int64Value(vals[j]))
			}
			o.Keys = append(o.Keys, "total")
			o.Values = append(o.Values, int64Value(vals[len(counts)]))
			result = append(result, o)
		}
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", ctJSON)
	out := newBody(w, r)
	w.WriteHeader(http.StatusOK)
	out.Write(jsonv.AppendCompact(nil, result))
	out.Close()
}
