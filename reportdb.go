// Package reportdb holds the domain of the report store: the normalised
// report and its resource events as stored, and the error type shared by
// every layer (its codes become HTTP statuses in one place, httpapi). The
// contract the storage backends implement is package store's.
//
// Data flows one way (see README "Architecture"):
//
//	ingest: body -> wire|puppetreport decode -> validate -> normalise (this
//	        package's Report, hash computed) -> store (one transaction) -> ack
//	query:  request -> params (httpapi) -> JSON AST or PQL -> typed nodes
//	        (query/ast) -> plan (query) -> SQL (query/sqlgen, run by engine on
//	        a store) -> rows streamed as JSON (httpapi)
package reportdb

// Report is one stored report after validation and normalisation (the
// PuppetDB "store report" v8 semantics): timestamps are Unix milliseconds in
// UTC (truncated, never rounded), corrective_change is dropped (open-source
// PuppetDB never stores it), and only the resource events that PuppetDB
// keeps are present.
type Report struct {
	Hash                 string // 40 lower-case hex digits (see Hash)
	Certname             string
	PuppetVersion        string
	ReportFormat         int64
	ConfigurationVersion string
	StartTime            int64
	EndTime              int64
	ProducerTimestamp    int64
	ReceiveTime          int64
	Producer             *string
	Environment          string
	Status               *string
	Noop                 *bool
	NoopPending          *bool
	TransactionUUID      *string // canonical lower-case UUID text
	CatalogUUID          *string // canonical lower-case UUID text
	CodeID               *string
	JobID                *string
	CachedCatalogStatus  *string
	Type                 string // "agent" or "plan"
	// CorrectiveChange is kept for the opt-in enterprise event-count split;
	// PuppetDB FOSS never returns it (always null).
	CorrectiveChange *bool

	// Metrics and Logs are the submitted arrays rendered as PostgreSQL
	// renders jsonb (what PuppetDB returns in report rows); nil means null.
	Metrics []byte
	Logs    []byte

	Events []Event
}

// Event is one stored resource event.
type Event struct {
	Status        string
	Timestamp     int64 // Unix ms, UTC
	ResourceType  string
	ResourceTitle string
	Property      *string
	// NewValue and OldValue hold the JSON text of the submitted values,
	// object keys sorted, compact; a JSON null is the text "null".
	NewValue        string
	OldValue        string
	Message         *string
	File            *string
	Line            *int64
	ContainmentPath []string // nil when sent as null
	ContainingClass *string
	Name            *string
	// CorrectiveChange is kept for the opt-in enterprise event-count split.
	CorrectiveChange *bool
}

// Outcome is what storing one report did.
type Outcome int

const (
	// Stored means the report and its events were written.
	Stored Outcome = iota
	// Duplicate means a report with the same hash already existed; nothing
	// was written (PuppetDB: "ignored (duplicate)").
	Duplicate
	// Queued means the database could not take the report and it was
	// written to the durable spool instead; it is stored once the
	// database is back (PuppetDB: a command in its queue).
	Queued
)

func (o Outcome) String() string {
	switch o {
	case Duplicate:
		return "duplicate"
	case Queued:
		return "queued"
	}
	return "stored"
}
