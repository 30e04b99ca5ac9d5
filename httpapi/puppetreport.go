package httpapi

import (
	"net/http"
	"strings"
	"time"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/puppetreport"
	"reportdb/wire"
)

// handlePuppetReport serves PUT /puppet/v3/report/{certname}: Puppet's own
// report JSON (report_format 10, 11, 12), as an agent sends it when its
// report server points here. The report is converted exactly as the
// PuppetDB terminus converts it, then stored like a wire v8 report.
//
// Format 10 has no producer_timestamp or producer. They are taken from the
// producer_timestamp / producer query parameters or the X-Producer-Timestamp
// / X-Producer headers; otherwise the time of receipt (as the terminus uses
// the time it processes the report) and the configured producer.
func (s *Server) handlePuppetReport(w http.ResponseWriter, r *http.Request) {
	if mt, ok := checkContentType(r); !ok && !strings.EqualFold(mt, "text/pson") {
		s.writeError(w, r, &reportdb.Error{Code: reportdb.EUNSUPPORTED, Message: "content type " + mt + " not supported"})
		return
	}
	body, err := s.readJSONBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	receive := s.cfg.Now()
	doc, err := jsonv.Parse(body)
	if err != nil {
		s.writeError(w, r, reportdb.Invalid("The report is not valid JSON: "+err.Error()))
		return
	}
	if err := s.submitPuppetReport(r, doc, receive, r.PathValue("certname")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeEmptyArray(w)
}

// submitPuppetReport converts doc, a parsed Puppet report (report JSON, or
// YAML through puppetreport.ParseYAML), exactly as the PuppetDB terminus
// does and stores it; receive is the time of receipt. When certname is not
// empty the report's host must equal it.
//
// producer_timestamp comes from the producer_timestamp query parameter or
// the X-Producer-Timestamp header, else the time of receipt; producer from
// the producer parameter, the X-Producer header or the configured producer.
func (s *Server) submitPuppetReport(r *http.Request, doc any, receive time.Time, certname string) error {
	q := r.URL.Query()
	ts := firstNonEmpty(q.Get("producer_timestamp"), r.Header.Get("X-Producer-Timestamp"))
	if ts == "" {
		ts = wire.FormatMillis(receive.UnixMilli())
	} else if _, err := wire.ParseDatetime(ts); err != nil {
		return reportdb.Errorf(reportdb.EINVALID, "producer_timestamp %q is not a valid date-time (ISO 8601 with a zone)", ts)
	}
	var producer *string
	if p := firstNonEmpty(q.Get("producer"), r.Header.Get("X-Producer"), s.cfg.Producer); p != "" {
		producer = &p
	}
	v8, err := puppetreport.Convert(doc, puppetreport.Options{ProducerTimestamp: ts, Producer: producer})
	if err != nil {
		return reportdb.Invalid(err.Error())
	}
	rep, err := wire.Decode(8, v8, receive.UnixMilli())
	releaseBody(r) // what is kept from here on is the decoded report
	if err != nil {
		return err
	}
	if certname != "" && certname != rep.Certname {
		return reportdb.Errorf(reportdb.EINVALID, "The report is for host %q but was submitted for certname %q", rep.Certname, certname)
	}
	_, err = s.committer.Submit(r.Context(), rep)
	return err
}

// writeEmptyArray answers a stored Puppet report: 200 with the JSON array
// [] (what Puppet Server answers to a report PUT; Puppet ignores it).
func writeEmptyArray(w http.ResponseWriter) {
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("[]"))
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
