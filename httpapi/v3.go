package httpapi

import (
	"net/http"
	"strings"

	"reportdb"
	"reportdb/jsonv"
)

// PuppetDB's v3 query API (/v3/events, /v3/event-counts,
// /v3/aggregate-event-counts, /v3/reports) spelled multi-word parameters
// with hyphens; it is served with v4 semantics, and v4 spellings are
// refused there as v3 spellings are refused on v4.
var v3Names = map[string]string{
	"order-by": "order_by", "include-total": "include_total", "summarize-by": "summarize_by",
	"count-by": "count_by", "counts-filter": "counts_filter", "distinct-resources": "distinct_resources",
	"distinct-start-time": "distinct_start_time", "distinct-end-time": "distinct_end_time",
}

func (s *Server) v3(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/v3/") }

func v3Params(params []param) ([]param, error) {
	out := make([]param, len(params))
	for i, p := range params {
		if v4, ok := v3Names[p.Name]; ok {
			p.Name = v4
		} else if strings.Contains(p.Name, "_") {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Unsupported query parameter '%s'", p.Name)
		}
		out[i] = p
	}
	return out, nil
}

func parseJSON(b []byte) (any, error) { return jsonv.Parse(b) }
