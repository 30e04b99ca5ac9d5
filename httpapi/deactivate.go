package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/store"
	"reportdb/wire"
)

// maxDeactivateVersion is the newest "deactivate node" command version
// (PuppetDB 7.12.1 and OpenVoxDB 8 accept 1 to 3: command/constants.clj).
const maxDeactivateVersion = 3

// deactivation parses the payload of a "deactivate node" command as
// PuppetDB's prep-deactivate-node does (command.clj): version 3 is
// {"certname": ..., "producer_timestamp": ... or null or absent},
// version 2 the certname as a JSON string, version 1 that string encoded
// as JSON once more. A missing producer_timestamp is the time received.
// Unlike PuppetDB, which queues the command and drops a bad payload
// later, a bad payload is refused here.
func (c *command) deactivation(received time.Time) (string, int64, error) {
	switch c.version {
	case 1, 2:
		s, ok := c.payload.(string)
		if !ok {
			return "", 0, c.invalid("The payload of version 1 and 2 must be the certname as a JSON string.")
		}
		if c.version == 1 {
			v, err := jsonv.Parse([]byte(s))
			if s, ok = v.(string); err != nil || !ok {
				return "", 0, c.invalid("The payload of version 1 must be the certname as a JSON-encoded JSON string.")
			}
		}
		if strings.TrimSpace(s) == "" {
			return "", 0, c.invalid("Certname must be a non-empty string.")
		}
		return s, received.UnixMilli(), nil
	}
	o, ok := c.payload.(*jsonv.Object)
	if !ok {
		return "", 0, c.invalid(`The payload must be a JSON map: {"certname": ..., "producer_timestamp": ...}.`)
	}
	var certname string
	ts := received.UnixMilli()
	for i, k := range o.Keys {
		switch v := o.Values[i]; k {
		case "certname":
			certname, _ = v.(string)
			if strings.TrimSpace(certname) == "" {
				return "", 0, c.invalid("Certname must be a non-empty string.")
			}
		case "producer_timestamp":
			if v == nil {
				continue
			}
			s, _ := v.(string)
			t, err := wire.ParseDatetime(s)
			if err != nil {
				return "", 0, c.invalid("producer_timestamp must be a datetime such as 2026-12-07T10:00:00.000Z, got " + jsonv.Clojure(v) + ".")
			}
			ts = t.UnixMilli()
		default:
			return "", 0, c.invalid("The payload has an unknown key: " + k + " (it may have certname and producer_timestamp).")
		}
	}
	if certname == "" {
		return "", 0, c.invalid("The payload is missing its certname.")
	}
	return certname, ts, nil
}

// deactivateNode stores a "deactivate node" command before answering, as
// reports are: a 200 means the deactivation is durable. A command older
// than the node's latest report changes nothing (PuppetDB: "stale") and
// is answered 200 too. The node is left out of /nodes, the root
// endpoint, the dashboard and the fleet metrics until a newer report
// arrives; node-purge-ttl later it is deleted.
//
// With an upstream PuppetDB, the command is recorded here first, then
// forwarded as received (decoded): a failure on either side is a 503 the
// client retries, and deactivating twice changes nothing.
func (s *Server) deactivateNode(w http.ResponseWriter, r *http.Request, cmd *command, body []byte, received time.Time, wait float64) {
	certname, ts, err := cmd.deactivation(received)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	done, err := s.backend.DeactivateNode(r.Context(), certname, ts)
	if err != nil {
		var e *reportdb.Error
		if !errors.As(err, &e) && !errors.Is(err, context.Canceled) {
			// a valid command is never a 500: the client may send it again
			s.log.Warn("deactivate node: not stored", "certname", certname, "err", err)
			err = &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: store.TransientRetryAfter,
				Message: "The database could not store the deactivation right now; retry later", Err: err}
		}
		s.writeError(w, r, err)
		return
	}
	if !done {
		s.log.Info("deactivate node: the node has a newer report; nothing changed", "certname", certname,
			"producer_timestamp", wire.FormatMillis(ts))
	} else if s.cfg.OnDeactivated != nil {
		s.cfg.OnDeactivated(certname)
	}
	if s.cfg.Upstream != nil {
		fr := r.Clone(r.Context())
		fr.Header.Del("Content-Encoding")
		fr.Header.Del("X-Uncompressed-Length")
		s.forward(w, fr, body)
		return
	}
	resp := &jsonv.Object{Keys: []string{"uuid"}, Values: []any{newUUID()}}
	if wait > 0 {
		resp.Keys = append(resp.Keys, "processed", "timed_out")
		resp.Values = append(resp.Values, true, false)
	}
	writePretty(w, http.StatusOK, resp)
}
