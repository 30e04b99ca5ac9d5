// Package conformance replays the shared PuppetDB 7.12.1 goldens
// (conformance/cases.jsonl) against a reportdb HTTP handler, with the same
// comparison rules as the shared run.py, so that every storage backend is
// held to them in `go test`.
package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
)

// LoadCorpus submits every wire v8 report of the corpus, in manifest order,
// through POST /pdb/cmd/v1 as run.py does.
func LoadCorpus(tb testing.TB, h http.Handler) {
	tb.Helper()
	m, dir := testcorpus.LoadManifest(tb)
	for _, s := range m.Submissions {
		body := testcorpus.ReadFile(tb, filepath.Join(dir, s.Wire8))
		q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {s.Certname},
			"producer-timestamp": {s.ProducerTimestamp}}
		req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			tb.Fatalf("submitting %s: %d %s", s.Wire8, rec.Code, rec.Body.String())
		}
	}
}

// LoadCorpusFormat10 submits the same reports in Puppet's own format 10
// through PUT /puppet/v3/report/<certname>, with the manifest's producer
// timestamp and producer as run.py --submit format10 does.
func LoadCorpusFormat10(tb testing.TB, h http.Handler) {
	tb.Helper()
	m, dir := testcorpus.LoadManifest(tb)
	for _, s := range m.Submissions {
		body := testcorpus.ReadFile(tb, filepath.Join(dir, s.Format10))
		q := url.Values{"environment": {s.Environment}, "producer_timestamp": {s.ProducerTimestamp}}
		req := httptest.NewRequest("PUT", "/puppet/v3/report/"+url.PathEscape(s.Certname)+"?"+q.Encode(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Producer-Timestamp", s.ProducerTimestamp)
		req.Header.Set("X-Producer", s.Producer)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			tb.Fatalf("submitting %s: %d %s", s.Format10, rec.Code, rec.Body.String())
		}
	}
}

// Response is what a case got.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a case's exact request to h.
func Do(h http.Handler, c testcorpus.Case) Response {
	var body io.Reader
	if c.Request.BodyRaw != nil {
		body = strings.NewReader(*c.Request.BodyRaw)
	}
	req := httptest.NewRequest(c.Request.Method, "http://127.0.0.1:8080"+c.Request.Target, body)
	for k, v := range c.Request.Headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$`)

func normCT(ct string) string {
	var parts []string
	for _, p := range strings.Split(ct, ";") {
		if p = strings.TrimSpace(strings.ToLower(p)); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ";")
}

// Compare applies run.py's rules and returns the problems found (none:
// the case passes).
func Compare(c testcorpus.Case, r Response) []string {
	var problems []string
	exp := c.Expect
	if r.Status != exp.Status {
		problems = append(problems, fmt.Sprintf("status: expected %d, got %d", exp.Status, r.Status))
	}
	if normCT(exp.ContentType) != normCT(r.Header.Get("Content-Type")) {
		problems = append(problems, fmt.Sprintf("content-type: expected %q, got %q", exp.ContentType, r.Header.Get("Content-Type")))
	}
	if exp.Status >= 400 {
		if strings.TrimSpace(string(r.Body)) == "" {
			problems = append(problems, "error body is empty")
		}
		return problems
	}
	if exp.XRecords != nil {
		if got := r.Header.Get("X-Records"); strings.TrimSpace(got) != fmt.Sprint(*exp.XRecords) {
			problems = append(problems, fmt.Sprintf("X-Records: expected %d, got %q", *exp.XRecords, got))
		}
	}
	if exp.BodyKind != "json" {
		var want string
		json.Unmarshal(exp.Body, &want)
		if string(r.Body) != want {
			problems = append(problems, fmt.Sprintf("body text differs: expected %q, got %q", want, r.Body))
		}
		return problems
	}
	var golden, actual any
	if err := json.Unmarshal(exp.Body, &golden); err != nil {
		return append(problems, "bad golden: "+err.Error())
	}
	if err := json.Unmarshal(r.Body, &actual); err != nil {
		return append(problems, fmt.Sprintf("body is not JSON: %.200q", r.Body))
	}
	golden, actual = scrub(golden, actual, "$", &problems)
	golden, actual = sortNested(golden), sortNested(actual)
	ga, gok := golden.([]any)
	aa, aok := actual.([]any)
	if !gok || !aok {
		if canon(golden) != canon(actual) {
			problems = append(problems, fmt.Sprintf("body: expected %.300s, got %.300s", canon(golden), canon(actual)))
		}
		return problems
	}
	switch c.Order.Mode {
	case "strict":
		if len(ga) != len(aa) {
			problems = append(problems, fmt.Sprintf("body: expected %d rows, got %d", len(ga), len(aa)))
		} else {
			for i := range ga {
				if canon(ga[i]) != canon(aa[i]) {
					problems = append(problems, fmt.Sprintf("row %d: expected %.300s, got %.300s", i, canon(ga[i]), canon(aa[i])))
					break
				}
			}
		}
	default:
		if d := multisetDiff(ga, aa); d != "" {
			problems = append(problems, d)
		} else if c.Order.Mode == "keys" {
			if canon(project(ga, c.Order.Keys)) != canon(project(aa, c.Order.Keys)) {
				problems = append(problems, fmt.Sprintf("order: rows not ordered by %v like PuppetDB", c.Order.Keys))
			}
		}
	}
	return problems
}

func canon(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // maps marshal with sorted keys
	return strings.TrimSpace(b.String())
}

var receiveKeys = []string{"report_receive_time", "receive_time"}

func scrub(g, a any, path string, problems *[]string) (any, any) {
	switch gv := g.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		out := map[string]any{}
		for k, v := range gv {
			out[k] = v
		}
		if !ok {
			return out, a
		}
		aout := map[string]any{}
		for k, v := range am {
			aout[k] = v
		}
		for _, k := range receiveKeys {
			gval, has := out[k]
			if !has {
				continue
			}
			av, present := aout[k]
			switch {
			case !present:
				*problems = append(*problems, path+"."+k+": missing (golden has a receive time)")
			case gval == nil && av != nil:
				*problems = append(*problems, fmt.Sprintf("%s.%s: expected null, got %v", path, k, av))
			case gval != nil:
				if s, ok := av.(string); !ok || !timestampRE.MatchString(s) {
					*problems = append(*problems, fmt.Sprintf("%s.%s: not a well-formed timestamp: %v", path, k, av))
				}
				out[k], aout[k] = "<receive-time>", "<receive-time>"
			}
		}
		for k := range out {
			if av, ok := aout[k]; ok && k != receiveKeys[0] && k != receiveKeys[1] {
				out[k], aout[k] = scrub(out[k], av, path+"."+k, problems)
			}
		}
		return out, aout
	case []any:
		al, ok := a.([]any)
		if !ok {
			return g, a
		}
		gout := append([]any(nil), gv...)
		aout := append([]any(nil), al...)
		for i := 0; i < len(gout) && i < len(aout); i++ {
			gout[i], aout[i] = scrub(gout[i], aout[i], fmt.Sprintf("%s[%d]", path, i), problems)
		}
		for i := len(gout); i < len(aout); i++ {
			aout[i] = scrubOnly(aout[i])
		}
		for i := len(aout); i < len(gout); i++ {
			gout[i] = scrubOnly(gout[i])
		}
		return gout, aout
	}
	return g, a
}

func scrubOnly(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if (k == receiveKeys[0] || k == receiveKeys[1]) && e != nil {
				out[k] = "<receive-time>"
			} else {
				out[k] = scrubOnly(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = scrubOnly(x[i])
		}
		return out
	}
	return v
}

// sortNested sorts resource_events.data arrays, which PuppetDB builds
// without an ORDER BY.
func sortNested(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = sortNested(e)
		}
		if re, ok := out["resource_events"].(map[string]any); ok {
			if data, ok := re["data"].([]any); ok {
				sorted := append([]any(nil), data...)
				sort.Slice(sorted, func(i, j int) bool { return canon(sorted[i]) < canon(sorted[j]) })
				re2 := map[string]any{}
				for k, e := range re {
					re2[k] = e
				}
				re2["data"] = sorted
				out["resource_events"] = re2
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = sortNested(x[i])
		}
		return out
	}
	return v
}

func project(rows []any, keys []string) []any {
	var out []any
	for _, r := range rows {
		var t []any
		for _, k := range keys {
			var v any = r
			for _, part := range strings.Split(k, ".") {
				if m, ok := v.(map[string]any); ok {
					v = m[part]
				} else {
					v = nil
				}
			}
			t = append(t, v)
		}
		out = append(out, t)
	}
	return out
}

func multisetDiff(g, a []any) string {
	count := map[string]int{}
	for _, x := range g {
		count[canon(x)]++
	}
	for _, x := range a {
		count[canon(x)]--
	}
	var missing, extra []string
	for k, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, k)
		}
		for ; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	var b strings.Builder
	fmt.Fprintf(&b, "rows differ (%d expected, %d got)", len(g), len(a))
	for i, m := range missing {
		if i == 3 {
			fmt.Fprintf(&b, "\n  ... %d more missing", len(missing)-3)
			break
		}
		fmt.Fprintf(&b, "\n  missing:    %.400s", m)
	}
	for i, x := range extra {
		if i == 3 {
			fmt.Fprintf(&b, "\n  ... %d more unexpected", len(extra)-3)
			break
		}
		fmt.Fprintf(&b, "\n  unexpected: %.400s", x)
	}
	return b.String()
}
