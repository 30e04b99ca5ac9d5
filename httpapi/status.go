package httpapi

import (
	"net/http"
	"strconv"

	"reportdb/jsonv"
	"reportdb/store"
)

func obj(kv ...any) *jsonv.Object {
	o := &jsonv.Object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Keys = append(o.Keys, kv[i].(string))
		o.Values = append(o.Values, kv[i+1])
	}
	return o
}

// puppetdbStatus is the puppetdb-status service entry in PuppetDB's shape
// (clients and load balancers read "state").
func (s *Server) puppetdbStatus(r *http.Request) *jsonv.Object {
	up := s.backendUp(r)
	state := "running"
	if !up {
		state = "error"
	}
	return obj("service_version", s.cfg.PuppetDBVersion, "service_status_version", jsonv.Number("1"),
		"detail_level", "info", "state", state,
		"status", obj("maintenance_mode?", false, "queue_depth", s.queueDepth(), "read_db_up?", up,
			"write_db_up?", up, "write_dbs_up?", up, "write_db", obj("default", obj("up?", up))),
		"active_alerts", []any{})
}

func (s *Server) backendUp(r *http.Request) bool {
	ctx, cancel := s.queryContext(r)
	defer cancel()
	return s.backend.Ping(ctx) == nil
}

// databasesService is the name of the status service of the database
// servers (PostgreSQL: the primary and the read replicas).
const databasesService = "reportdb-databases"

// databasesStatus is the state of the database servers, nil for a
// backend without servers of its own (the embedded store).
func (s *Server) databasesStatus() *jsonv.Object {
	ds, ok := s.backend.(store.DatabaseServers)
	if !ok {
		return nil
	}
	list := ds.DatabaseServers()
	servers := make([]any, 0, len(list))
	state := "running"
	if len(list) == 0 {
		state = "error" // PostgreSQL not reached yet
	}
	for _, d := range list {
		o := obj("server", d.Server, "role", d.Role, "up?", d.Up)
		if d.Role == "replica" {
			o.Keys = append(o.Keys, "in_rotation?", "lag_seconds")
			o.Values = append(o.Values, d.InRotation, jsonv.Number(strconv.FormatFloat(d.Lag.Seconds(), 'f', 3, 64)))
		} else if !d.Up {
			state = "error"
		}
		o.Keys = append(o.Keys, "queries")
		o.Values = append(o.Values, jsonv.Number(strconv.FormatInt(d.Queries, 10)))
		servers = append(servers, o)
	}
	return obj("service_version", s.cfg.PuppetDBVersion, "service_status_version", jsonv.Number("1"),
		"detail_level", "info", "state", state, "status", obj("servers", servers), "active_alerts", []any{})
}

func (s *Server) handleStatusServices(w http.ResponseWriter, r *http.Request) {
	st := s.puppetdbStatus(r)
	all := obj("puppetdb-status", st,
		"status-service", obj("service_version", "1.1.1", "service_status_version", jsonv.Number("1"),
			"detail_level", "info", "state", "running", "status", obj(), "active_alerts", []any{}))
	if db := s.databasesStatus(); db != nil {
		all.Keys = append(all.Keys, databasesService)
		all.Values = append(all.Values, db)
	}
	writeCompact(w, http.StatusOK, all)
}

func (s *Server) handleStatusService(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	switch name {
	case "puppetdb-status":
		st := s.puppetdbStatus(r)
		st.Keys = append(st.Keys, "service_name")
		st.Values = append(st.Values, name)
		code := http.StatusOK
		if st.Values[3] != "running" {
			code = http.StatusServiceUnavailable
		}
		writeCompact(w, code, st)
	case databasesService:
		st := s.databasesStatus()
		if st == nil {
			serviceNotFound(w, name) // the embedded store
			return
		}
		st.Keys = append(st.Keys, "service_name")
		st.Values = append(st.Values, name)
		writeCompact(w, http.StatusOK, st)
	case "status-service":
		writeCompact(w, http.StatusOK, obj("service_version", "1.1.1", "service_status_version", jsonv.Number("1"),
			"detail_level", "info", "state", "running", "status", obj(), "active_alerts", []any{}, "service_name", name))
	default:
		serviceNotFound(w, name)
	}
}

func serviceNotFound(w http.ResponseWriter, name string) {
	writeCompact(w, http.StatusNotFound, obj("kind", "service-not-found", "msg", "No status information found for service "+name))
}

func writeCompact(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(status)
	w.Write(jsonv.AppendCompact(nil, v))
}
