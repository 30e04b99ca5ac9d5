package store

import (
	"context"
	"fmt"
	"time"
)

// Consistency is what a read asks of the server that answers it, when a
// backend reads from replicas as well as from its primary.
type Consistency int

const (
	// AnyServer: a replica in rotation (at most the configured lag
	// behind the primary), else the primary. The default.
	AnyServer Consistency = iota
	// ReadYourWrites: a server that has replayed everything the primary
	// had committed when the read began (a replica that has caught up,
	// else the primary), so a report acknowledged before the query is in
	// its answer.
	ReadYourWrites
	// Primary: the primary.
	Primary
)

// ConsistencyHeader is the HTTP request header that sets a query's
// Consistency: "read-your-writes" or "primary" (absent: any server).
const ConsistencyHeader = "X-Reportdb-Consistency"

// ParseConsistency reads a ConsistencyHeader value.
func ParseConsistency(v string) (Consistency, error) {
	switch v {
	case "", "any":
		return AnyServer, nil
	case "read-your-writes":
		return ReadYourWrites, nil
	case "primary":
		return Primary, nil
	}
	return AnyServer, fmt.Errorf("%s must be read-your-writes, primary or any, not %q", ConsistencyHeader, v)
}

type consistencyKey struct{}

// WithConsistency returns ctx carrying c for the reads made with it.
func WithConsistency(ctx context.Context, c Consistency) context.Context {
	if c == AnyServer {
		return ctx
	}
	return context.WithValue(ctx, consistencyKey{}, c)
}

// ConsistencyOf is the Consistency ctx asks for (AnyServer by default).
func ConsistencyOf(ctx context.Context) Consistency {
	c, _ := ctx.Value(consistencyKey{}).(Consistency)
	return c
}

// DatabaseServer is the state of one database server a backend uses, for
// the status service and the metrics.
type DatabaseServer struct {
	Server string // host:port
	Role   string // "primary" or "replica"
	Up     bool   // answered its last check
	// InRotation: a replica that answers queries (at most the maximum
	// lag behind); the primary always is.
	InRotation bool
	// Lag is how far a replica's replay is behind the primary's WAL:
	// how long ago the primary first wrote what it has not replayed.
	Lag time.Duration
	// Queries counts the read transactions the server answered.
	Queries int64
	// QueryTime is their total time.
	QueryTime time.Duration
}

// DatabaseServers is implemented by a backend that knows its servers.
type DatabaseServers interface {
	DatabaseServers() []DatabaseServer
}
