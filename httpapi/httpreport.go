package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/puppetreport"
)

// yamlTypes are the media types accepted for YAML reports: Puppet's http
// report processor sends application/x-yaml; the others are the YAML
// media type (RFC 9512) and its common variants.
var yamlTypes = []string{"application/x-yaml", "text/yaml", "application/yaml", "text/x-yaml"}

// handleHTTPReport serves POST /reports/upload (Puppet Dashboard's path)
// and POST /upload (puppet-summary's path): the target of Puppet's `http`
// report processor (reports = http, reporturl = http://HOST:PORT/reports/upload),
// which POSTs the YAML dump of the report (Report#to_yaml) as
// application/x-yaml. Puppet's report JSON (application/json) is accepted
// too. Either way the report goes exactly the way of PUT
// /puppet/v3/report/{certname} (submitPuppetReport: producer_timestamp and
// producer from the query parameters, the X-Producer-Timestamp / X-Producer
// headers, else the time of receipt and the configured producer), and the
// answer is 200 [] once it is stored, 400 with the reason when it is not a
// valid report (nothing is stored), 415 for any other content type.
func (s *Server) handleHTTPReport(w http.ResponseWriter, r *http.Request) {
	mt := strings.TrimSpace(strings.SplitN(r.Header.Get("Content-Type"), ";", 2)[0])
	var parse func([]byte) (any, error)
	switch {
	case strings.EqualFold(mt, "application/json"):
		parse = func(b []byte) (any, error) {
			if err := s.chargeReportJSON(r, b); err != nil {
				return nil, err
			}
			doc, err := jsonv.Parse(b)
			if err != nil {
				return nil, reportdb.Invalid("The report is not valid JSON: " + err.Error())
			}
			return doc, nil
		}
	case isYAMLType(mt):
		parse = func(b []byte) (any, error) {
			if len(b) > MaxYAMLBytes {
				return nil, reportdb.Errorf(reportdb.ETOOLARGE, "YAML reports are limited to %d bytes (a YAML parse costs many times its size in memory); send larger reports as JSON", MaxYAMLBytes)
			}
			y := puppetreport.NewYAMLReport(b) // its nodes counted once, for the charge and the limit
			if _, err := leaseOf(r).grow(r.Context(), y.ParseCost()); err != nil {
				return nil, err
			}
			doc, err := y.Parse(s.cfg.MaxBodyBytes)
			if errors.Is(err, puppetreport.ErrYAMLTooLarge) {
				return nil, reportdb.Errorf(reportdb.ETOOLARGE, "The report is too large: %v", err)
			}
			if err != nil {
				return nil, reportdb.Invalid("The report is not a valid Puppet YAML report: " + err.Error())
			}
			return doc, nil
		}
	default:
		what := "content type " + mt
		if mt == "" {
			what = "a request without Content-Type"
		}
		s.writeError(w, r, &reportdb.Error{Code: reportdb.EUNSUPPORTED, Message: what +
			" not supported: send Puppet's YAML report (application/x-yaml, as the http report processor does) or its report JSON (application/json)"})
		return
	}
	body, err := s.readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	receive := s.cfg.Now()
	doc, err := parse(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.submitPuppetReport(r, doc, receive, ""); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeEmptyArray(w)
}

// MaxYAMLBytes bounds YAML report bodies: the YAML library allocates
// about 30 times the document's size while parsing (real reports are tens
// of kilobytes).
const MaxYAMLBytes = 8 << 20

func isYAMLType(mt string) bool {
	for _, t := range yamlTypes {
		if strings.EqualFold(mt, t) {
			return true
		}
	}
	return false
}
