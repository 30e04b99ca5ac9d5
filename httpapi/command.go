package httpapi

import (
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/wire"
)

var commandParams = []string{"checksum", "secondsToWaitForCompletion", "certname", "command", "version", "producer-timestamp"}

var knownCommands = []string{"configure expiration", "deactivate node", "replace catalog",
	"replace catalog inputs", "replace facts", "store report"}

// handleCommand serves POST /pdb/cmd/v1. Unlike PuppetDB, which queues a
// command and validates it later (silently discarding bad reports),
// reportdb validates and stores the report before answering: a 200 means
// the report is durable, a 400 says what is wrong and nothing was stored.
func (s *Server) handleCommand(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		s.writeError(w, r, &reportdb.Error{Code: reportdb.EINVALID, Message: "Commands must be submitted with POST"})
		return
	}
	if mt, ok := checkContentType(r); !ok {
		s.writeError(w, r, &reportdb.Error{Code: reportdb.EUNSUPPORTED, Message: "content type " + mt + " not supported"})
		return
	}
	body, err := s.readJSONBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	receive := s.cfg.Now()
	cmd, err := parseCommand(r.URL.RawQuery, body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	wait, err := cmd.waitSeconds()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if cmd.name == "deactivate node" {
		s.deactivateNode(w, r, cmd, body, receive, wait)
		return
	}
	rep, err := wire.Decode(cmd.version, cmd.payload, receive.UnixMilli())
	body, cmd.payload = nil, nil
	releaseBody(r) // what is kept from here on is the decoded report
	if err != nil {
		s.writeError(w, r, cmd.invalid(reportdb.ErrorMessage(err)))
		return
	}
	outcome, err := s.committer.Submit(r.Context(), rep)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resp := &jsonv.Object{Keys: []string{"uuid"}, Values: []any{newUUID()}}
	if wait > 0 {
		// a spooled report is a queued command: wait for its delivery to
		// the database, as PuppetDB waits for the command to be processed
		if outcome == reportdb.Queued && !s.awaitQueued(r, rep.Hash, wait) {
			resp.Keys = append(resp.Keys, "processed", "timed_out")
			resp.Values = append(resp.Values, false, true)
			writePretty(w, http.StatusServiceUnavailable, resp)
			return
		}
		resp.Keys = append(resp.Keys, "processed", "timed_out")
		resp.Values = append(resp.Values, true, false)
	}
	writePretty(w, http.StatusOK, resp)
}

var gzipReaders sync.Pool

// readBody reads a submission body, gunzipping Content-Encoding: gzip, and
// enforces the size limit on the decoded bytes, charging them to the
// request's share of the body budget. A body announced larger than the
// limit (Content-Length, or X-Uncompressed-Length, which the terminus
// sends with gzip) is refused before anything is read.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	tooLarge := reportdb.Errorf(reportdb.ETOOLARGE, "Command rejected due to size exceeding max-command-size (%d bytes)", s.cfg.MaxBodyBytes)
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, tooLarge
	}
	var in io.Reader = r.Body
	hint := r.ContentLength
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		src := io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1)
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(src)
		} else {
			err = zr.Reset(src)
		}
		if err != nil {
			return nil, reportdb.Errorf(reportdb.EINVALID, "The request body is not valid gzip: %v", err)
		}
		defer gzipReaders.Put(zr)
		in = zr
		hint = 0
		if n, err := strconv.ParseInt(r.Header.Get("X-Uncompressed-Length"), 10, 64); err == nil {
			if n > s.cfg.MaxBodyBytes {
				return nil, tooLarge
			}
			hint = n
		}
	default:
		return nil, &reportdb.Error{Code: reportdb.EUNSUPPORTED, Message: "content encoding " + enc + " not supported"}
	}
	buf, err := readLimited(r.Context(), leaseOf(r), in, s.cfg.MaxBodyBytes, hint)
	if err != nil {
		if reportdb.ErrorCode(err) == reportdb.EUNAVAILABLE {
			return nil, err
		}
		return nil, reportdb.Errorf(reportdb.EINVALID, "Could not read the request body: %v", err)
	}
	if int64(len(buf)) > s.cfg.MaxBodyBytes {
		return nil, tooLarge
	}
	return buf, nil
}

// maxReportValues bounds the JSON values of a report body: an eighth of
// the body limit (8 million for 64 MiB), above any real report (the
// densest, small ones, have a value every 9 bytes), so that parsing one
// takes at most a few times the body limit.
func (s *Server) maxReportValues() int { return int(s.cfg.MaxBodyBytes / 8) }

// readJSONBody is readBody for a JSON report, with its parse cost bounded
// and charged to the body budget.
func (s *Server) readJSONBody(r *http.Request) ([]byte, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	return body, s.chargeReportJSON(r, body)
}

func (s *Server) chargeReportJSON(r *http.Request, body []byte) error {
	return chargeJSON(r, body, s.maxReportValues(), func(n int) error {
		return reportdb.Errorf(reportdb.ETOOLARGE, "The report has about %d JSON values (arrays, objects, keys and scalars); the limit is %d (max-body-bytes / 8)", n, s.maxReportValues())
	})
}

// command is a parsed /pdb/cmd/v1 submission.
type command struct {
	name     any // string or nil, as PuppetDB prints it in messages
	certname any
	version  int
	payload  any
	params   map[string]string
}

// invalid renders PuppetDB's command validation error:
// 400 {"error" : "Command \"store report\" for certname \"a\" is invalid. <why>"}.
func (c *command) invalid(why string) error {
	msg := fmt.Sprintf("Command %s for certname %s is invalid. %s", jsonv.Clojure(c.name), jsonv.Clojure(c.certname), why)
	return jsonBodyError{&reportdb.Error{Code: reportdb.EINVALID, Message: msg}}
}

func parseCommand(rawQuery string, body []byte) (*command, error) {
	params, err := parseQueryString(rawQuery)
	if err != nil {
		return nil, err
	}
	c := &command{params: map[string]string{}}
	for _, p := range params {
		c.params[p.Name] = p.Str
	}
	var version any
	if name, ok := c.params["command"]; ok {
		// new form: parameters in the URL, the payload is the body
		c.name = strings.ReplaceAll(name, "_", " ")
		if cn, ok := c.params["certname"]; ok {
			c.certname = cn
		}
		if v, ok := c.params["version"]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				version = n
			} else {
				version = v
			}
		}
		if c.payload, err = jsonv.Parse(body); err != nil {
			return nil, c.invalid("The report is not valid JSON: " + err.Error())
		}
	} else {
		// old form: {"command": ..., "version": ..., "payload": {...}}
		v, err := jsonv.Parse(body)
		o, ok := v.(*jsonv.Object)
		if err != nil || !ok || !o.Has("command") || !o.Has("version") || !o.Has("payload") {
			return nil, c.invalid("Command was submitted without query parameters (old format). The request body must be a JSON map with required keys: command, version, payload.")
		}
		name, _ := o.Get("command")
		if s, ok := name.(string); ok {
			c.name = strings.ReplaceAll(s, "_", " ")
		} else {
			c.name = name
		}
		if vv, _ := o.Get("version"); vv != nil {
			if n, ok := vv.(jsonv.Number); ok && n.IsInteger() {
				x, _ := strconv.Atoi(string(n))
				version = x
			} else {
				version = vv
			}
		}
		c.payload, _ = o.Get("payload")
		po, ok := c.payload.(*jsonv.Object)
		if !ok {
			return nil, c.invalid("Command was submitted without query parameters (old format). The payload value must be a JSON map.")
		}
		if cn, ok := po.Get("certname"); ok {
			c.certname = cn
		}
	}
	if c.certname == nil {
		return nil, c.invalid("Command is missing required parameters: certname.")
	}
	for _, p := range params {
		if !slices.Contains(commandParams, p.Name) {
			return nil, c.invalid("Command has invalid parameters: " + p.Name + ".")
		}
	}
	if cn, ok := c.certname.(string); !ok || strings.TrimSpace(cn) == "" {
		return nil, c.invalid("Certname must be a non-empty string.")
	}
	name, _ := c.name.(string)
	if !slices.Contains(knownCommands, name) {
		return nil, c.invalid("Command must be one of: " + strings.Join(knownCommands, ", ") + ".")
	}
	n, ok := version.(int)
	if !ok {
		return nil, c.invalid("Version must be a valid integer.")
	}
	switch name {
	case "store report":
	case "deactivate node":
		if n < 1 || n > maxDeactivateVersion {
			return nil, c.invalid(fmt.Sprintf("Version %d of command \"deactivate node\" is not supported. The supported versions are 1 to %d.", n, maxDeactivateVersion))
		}
		c.version = n
		return c, nil
	default:
		return nil, c.invalid(fmt.Sprintf("reportdb stores reports and node deactivations only; the command %q is not supported.", name))
	}
	if n < wire.MinVersion {
		return nil, c.invalid(fmt.Sprintf("Version %d of command \"store report\" is retired. The minimum supported version is %d.", n, wire.MinVersion))
	}
	if n > wire.MaxVersion {
		return nil, c.invalid(fmt.Sprintf("Version %d of command \"store report\" is not supported. The newest supported version is %d.", n, wire.MaxVersion))
	}
	c.version = n
	return c, nil
}

func (c *command) waitSeconds() (float64, error) {
	v, ok := c.params["secondsToWaitForCompletion"]
	if !ok {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, reportdb.Errorf(reportdb.EINVALID, "secondsToWaitForCompletion must be a number of seconds, got %q", v)
	}
	return f, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
