// Package config is the configuration of `reportdb serve`: every setting
// has one name, used as the command-line flag (--name), as the key of the
// YAML configuration file and, upper-cased with REPORTDB_ in front, as the
// environment variable. Precedence, lowest first: built-in defaults, the
// configuration file (--config FILE or REPORTDB_CONFIG), the environment,
// the flags.
package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the effective configuration.
type Config struct {
	Listen         string
	TLSListen      string
	TLSCert        string
	TLSKey         string
	TLSCA          string
	TLSCRL         string
	CertAllowlist  string
	DataDir        string
	Database       string
	ReadDatabases  []string
	MaxReplicaLag  time.Duration
	MaxConnections int
	MaxBodyBytes   int64
	QueryTimeout   time.Duration
	SlowQuery      time.Duration
	MaxBatch       int
	Writers        int
	ReportTTL      time.Duration
	GCInterval     time.Duration
	// NodeTTL, NodePurgeTTL, NodePurgeBatch: PuppetDB's node-ttl,
	// node-purge-ttl and node-purge-gc-batch-limit.
	NodeTTL          time.Duration
	NodePurgeTTL     time.Duration
	NodePurgeBatch   int
	AnalyzeRows      int64
	CorrectiveCounts bool
	// CatalogEnvironmentFromReports: nodes' catalog_environment is their
	// latest report's environment (PuppetDB: null without catalogs).
	CatalogEnvironmentFromReports bool
	// PuppetDBVersion is the PuppetDB version reportdb claims at
	// /pdb/meta/v1/version and in /status/v1/services.
	PuppetDBVersion string
	// Upstream is the PuppetDB reportdb stands in front of (facts,
	// catalogs, ...), with its client TLS files.
	Upstream        string
	UpstreamTLSCert string
	UpstreamTLSKey  string
	UpstreamTLSCA   string
	LogFormat       string
	LogLevel        string
	DebugListen     string
	Dashboard       bool
	Unresponsive    time.Duration
	// issue 11: spool, budgets, HTTP limits
	SpoolDir             string
	SpoolMaxBytes        int64
	Acknowledge          string // "commit" or "spool"
	SQLiteQueryMemory    int64
	MaxConcurrentQueries int
	QueryQueueWait       time.Duration
	MaxJSONDepth         int
	ReadHeaderTimeout    time.Duration
	ReadTimeout          time.Duration
	IdleTimeout          time.Duration
	MaxHeaderBytes       int
	MaxURLBytes          int
	MaxInflightBodyBytes int64
	MemoryLimit          int64
	// Procs is GOMAXPROCS for serve; 0: automatic (see cmd/reportdb).
	Procs int
}

// Defaults returns the built-in defaults.
func Defaults() *Config {
	return &Config{
		Listen:       "127.0.0.1:8080",
		DataDir:      "./data",
		MaxBodyBytes: 64 << 20,
		QueryTimeout: 2 * time.Minute,
		SlowQuery:    time.Second,
		MaxBatch:     256,
		ReportTTL:    14 * 24 * time.Hour,
		GCInterval:   time.Hour,
		// PuppetDB's defaults (config.clj)
		NodeTTL:        7 * 24 * time.Hour,
		NodePurgeTTL:   14 * 24 * time.Hour,
		NodePurgeBatch: 25,
		AnalyzeRows:    50000,
		LogFormat:      "text",
		LogLevel:       "info",
		Dashboard:      true,
		Unresponsive:   2 * time.Hour,

		SpoolMaxBytes:        1 << 30,
		Acknowledge:          "commit",
		SQLiteQueryMemory:    8 << 20,
		MaxConcurrentQueries: 0,
		QueryQueueWait:       10 * time.Second,
		MaxJSONDepth:         512,
		ReadHeaderTimeout:    10 * time.Second,
		ReadTimeout:          5 * time.Minute,
		IdleTimeout:          2 * time.Minute,
		MaxHeaderBytes:       64 << 10,
		MaxURLBytes:          32 << 10,
		MaxInflightBodyBytes: 128 << 20,
		MemoryLimit:          256 << 20,

		MaxReplicaLag: 5 * time.Second,

		// the version the recorded conformance answers were taken from
		PuppetDBVersion: "7.12.1",
	}
}

// Setting describes one setting.
type Setting struct {
	Key    string // flag name and file key
	Help   string
	Secret bool // masked by Print
	field  func(*Config) any
}

// Env is the setting's environment variable.
func (s *Setting) Env() string {
	return "REPORTDB_" + strings.ToUpper(strings.ReplaceAll(s.Key, "-", "_"))
}

// Settings lists every setting in the order they are documented.
var Settings = []*Setting{
	{Key: "listen", Help: "`HOST:PORT` to serve plain HTTP on; empty: no plain HTTP listener", field: func(c *Config) any { return &c.Listen }},
	{Key: "tls-listen", Help: "`HOST:PORT` to serve HTTPS on, client certificates required (PuppetDB's 8081); empty: no HTTPS listener", field: func(c *Config) any { return &c.TLSListen }},
	{Key: "tls-cert", Help: "`FILE` of the server certificate (PEM; intermediates may follow) for tls-listen", field: func(c *Config) any { return &c.TLSCert }},
	{Key: "tls-key", Help: "`FILE` of the private key (PEM) of tls-cert", field: func(c *Config) any { return &c.TLSKey }},
	{Key: "tls-ca", Help: "`FILE` of the CA certificate(s) (PEM) that sign client certificates, e.g. the Puppet CA", field: func(c *Config) any { return &c.TLSCA }},
	{Key: "tls-crl", Help: "`FILE` of the certificate revocation list(s) (PEM) of tls-ca; revoked client certificates are refused; empty: none", field: func(c *Config) any { return &c.TLSCRL }},
	{Key: "cert-allowlist", Help: "`FILE` of certnames (client certificate CNs) allowed on tls-listen, one per line; others get 403; empty: every certificate of tls-ca", field: func(c *Config) any { return &c.CertAllowlist }},
	{Key: "data-dir", Help: "`DIR` holding the embedded database", field: func(c *Config) any { return &c.DataDir }},
	{Key: "database", Help: "PostgreSQL `URL`, e.g. postgres://user@host/db; empty: embedded database", Secret: true, field: func(c *Config) any { return &c.Database }},
	{Key: "read-database", Help: "PostgreSQL `URL` of a hot standby of database that answers queries, the dashboard and the fleet state (repeat for several; in the environment one per line, in the configuration file a list); writes and background work stay on database. See docs/replicas.md", Secret: true, field: func(c *Config) any { return &c.ReadDatabases }},
	{Key: "max-replica-lag", Help: "how far a read-database's replay may be behind database (`DURATION`) and still answer queries; further behind, database answers until it catches up", field: func(c *Config) any { return &c.MaxReplicaLag }},
	{Key: "max-connections", Help: "PostgreSQL connection pool size `N`; 0: automatic: max-concurrent-queries + 1 (the slot kept for small queries) + writers + 2, at least 8, so that writers never wait behind queries for a connection", field: func(c *Config) any { return &c.MaxConnections }},
	{Key: "max-body-bytes", Help: "largest accepted report body in bytes (`N`), after gzip decoding; larger gets 413", field: func(c *Config) any { return &c.MaxBodyBytes }},
	{Key: "query-timeout", Help: "longest a query may run (`DURATION`); a query's timeout parameter (PuppetDB 8) can shorten it, never lengthen it", field: func(c *Config) any { return &c.QueryTimeout }},
	{Key: "slow-query", Help: "queries slower than this (`DURATION`) are logged at WARN with their parameters; 0: off", field: func(c *Config) any { return &c.SlowQuery }},
	{Key: "max-batch", Help: "most reports committed in one transaction (`N`)", field: func(c *Config) any { return &c.MaxBatch }},
	{Key: "writers", Help: "batches written concurrently (`N`); 0: automatic: on PostgreSQL 1 on machines of 1-2 CPUs, else 3; 1 on SQLite", field: func(c *Config) any { return &c.Writers }},
	{Key: "report-ttl", Help: "delete reports whose producer_timestamp is older than this (`DURATION`, e.g. 14d); 0: keep everything", field: func(c *Config) any { return &c.ReportTTL }},
	{Key: "node-ttl", Help: "mark nodes without a report for this long as expired, as PuppetDB does: they leave /nodes, the dashboard and the fleet metrics until their next report (`DURATION`); 0: never (with upstream, the upstream PuppetDB's own node-ttl decides, which also sees facts and catalogs)", field: func(c *Config) any { return &c.NodeTTL }},
	{Key: "node-purge-ttl", Help: "delete nodes deactivated or expired this long ago, with their reports (`DURATION`); 0: never", field: func(c *Config) any { return &c.NodePurgeTTL }},
	{Key: "node-purge-gc-batch-limit", Help: "most nodes purged per gc-interval (`N`); 0: none", field: func(c *Config) any { return &c.NodePurgeBatch }},
	{Key: "gc-interval", Help: "how often retention, node expiry and purge and, on PostgreSQL, maintenance (VACUUM of closed day partitions) run (`DURATION`; the first run one interval after start)", field: func(c *Config) any { return &c.GCInterval }},
	{Key: "analyze-rows", Help: "PostgreSQL: ANALYZE a table in the background once this many rows (`N`), or 500 + 10% of the table if fewer, were inserted since; 0: off", field: func(c *Config) any { return &c.AnalyzeRows }},
	{Key: "corrective-counts", Help: "event counts split successes and noops into intentional and corrective (PE shape)", field: func(c *Config) any { return &c.CorrectiveCounts }},
	{Key: "catalog-environment-from-reports", Help: "nodes' catalog_environment is the environment of their latest report (for Puppetboard's per-environment pages without catalogs); off: null, as PuppetDB without catalogs", field: func(c *Config) any { return &c.CatalogEnvironmentFromReports }},
	{Key: "puppetdb-version", Help: "PuppetDB `VERSION` (MAJOR.MINOR.PATCH) reportdb reports at /pdb/meta/v1/version and as the puppetdb-status service_version; what it serves is the same either way. Set an 8.x version (e.g. 8.9.1) for clients that use PuppetDB 8 behaviour, such as the timeout query parameter (which reportdb accepts either way), only when the server reports 8", field: func(c *Config) any { return &c.PuppetDBVersion }},
	{Key: "upstream", Help: "`URL` of an existing PuppetDB reportdb stands in front of: reports are stored here, every other command and the queries on facts, catalogs, resources, ... go there, nodes are merged; empty: none", field: func(c *Config) any { return &c.Upstream }},
	{Key: "upstream-tls-cert", Help: "`FILE` of the client certificate (PEM) presented to an https upstream", field: func(c *Config) any { return &c.UpstreamTLSCert }},
	{Key: "upstream-tls-key", Help: "`FILE` of the private key (PEM) of upstream-tls-cert", field: func(c *Config) any { return &c.UpstreamTLSKey }},
	{Key: "upstream-tls-ca", Help: "`FILE` of the CA certificate(s) (PEM) that sign the upstream's certificate, e.g. the Puppet CA; empty: the system's", field: func(c *Config) any { return &c.UpstreamTLSCA }},
	{Key: "log-format", Help: "log `FORMAT`: text or json", field: func(c *Config) any { return &c.LogFormat }},
	{Key: "log-level", Help: "least severe `LEVEL` logged: debug, info (one line per request), warn (slow queries and problems) or error", field: func(c *Config) any { return &c.LogLevel }},
	{Key: "dashboard", Help: "serve the web dashboard under /ui/ (and redirect / to it)", field: func(c *Config) any { return &c.Dashboard }},
	{Key: "unresponsive", Help: "a node without a report for longer than this (`DURATION`) is unresponsive on the dashboard and in the fleet metrics", field: func(c *Config) any { return &c.Unresponsive }},
	{Key: "debug-listen", Help: "`HOST:PORT` for Go's /debug/pprof profiling endpoints; empty: off", field: func(c *Config) any { return &c.DebugListen }},
	{Key: "spool-dir", Help: "`DIR` of the spool holding reports while the database cannot take them (one per instance); empty: DATA-DIR/spool", field: func(c *Config) any { return &c.SpoolDir }},
	{Key: "sqlite-query-memory", Help: "memory one query may use inside the embedded store, in bytes (`N`): each reader connection's page cache, which also bounds the in-memory part of sorts and GROUP BY; the rest spills to temporary files", field: func(c *Config) any { return &c.SQLiteQueryMemory }},
	{Key: "acknowledge", Help: "when a submitted report is acknowledged (`WHEN`): commit (once its database transaction has committed: queryable when acknowledged, nothing kept on this instance) or spool (once fsynced to this instance's spool, then written to the database in large batches, as PuppetDB acknowledges a queued command; needs the spool)", field: func(c *Config) any { return &c.Acknowledge }},
	{Key: "spool-max-bytes", Help: "largest spool backlog in bytes (`N`); past it submissions get 503 with Retry-After; 0: no spool (reports fail while the database is down)", field: func(c *Config) any { return &c.SpoolMaxBytes }},
	{Key: "max-concurrent-queries", Help: "queries running at once (`N`); more wait up to query-queue-wait, then get 503 with Retry-After; 0: automatic (half the CPUs, at least 1, on SQLite, whose queries run in the reportdb process; 8 on PostgreSQL)", field: func(c *Config) any { return &c.MaxConcurrentQueries }},
	{Key: "query-queue-wait", Help: "longest a query waits for a free slot (`DURATION`)", field: func(c *Config) any { return &c.QueryQueueWait }},
	{Key: "max-json-depth", Help: "deepest nesting of JSON arrays/objects (`N`) in queries and reports (JSON and YAML); deeper gets 400. PQL queries have a fixed bound (10,000 nested grammar rules, about 2,000 levels of parentheses)", field: func(c *Config) any { return &c.MaxJSONDepth }},
	{Key: "read-header-timeout", Help: "longest a client may take to send the request headers (`DURATION`)", field: func(c *Config) any { return &c.ReadHeaderTimeout }},
	{Key: "read-timeout", Help: "longest a client may take to send a whole request, body included (`DURATION`)", field: func(c *Config) any { return &c.ReadTimeout }},
	{Key: "idle-timeout", Help: "how long an idle keep-alive connection stays open (`DURATION`)", field: func(c *Config) any { return &c.IdleTimeout }},
	{Key: "max-header-bytes", Help: "largest request header block in bytes (`N`); larger gets 431", field: func(c *Config) any { return &c.MaxHeaderBytes }},
	{Key: "max-url-bytes", Help: "longest request target (path and query string) in bytes (`N`); longer gets 414 (keep it below max-header-bytes, which counts the request line too)", field: func(c *Config) any { return &c.MaxURLBytes }},
	{Key: "max-inflight-body-bytes", Help: "request body bytes being read and decoded at once, all requests together (`N`; gzip counts what it inflates to); past it a request waits up to query-queue-wait, then gets 503 with Retry-After", field: func(c *Config) any { return &c.MaxInflightBodyBytes }},
	{Key: "memory-limit", Help: "soft limit on the memory of reportdb's Go code in bytes (`N`, Go's GOMEMLIMIT; the GOMEMLIMIT variable wins): near it the garbage collector runs more often and gives freed memory back; 0: none. The embedded store's page caches are outside it", field: func(c *Config) any { return &c.MemoryLimit }},
	{Key: "procs", Help: "CPUs running reportdb's Go code at once (`N`, Go's GOMAXPROCS); 0: automatic (the GOMAXPROCS variable when set; otherwise the CPUs Go sees, one fewer, at least 1, when PostgreSQL is on this machine and acknowledge is commit)", field: func(c *Config) any { return &c.Procs }},
}

// Lookup returns the setting named key, or nil.
func Lookup(key string) *Setting {
	for _, s := range Settings {
		if s.Key == key {
			return s
		}
	}
	return nil
}

// Set parses value into the setting's field of c.
func (s *Setting) Set(c *Config, value string) error {
	switch p := s.field(c).(type) {
	case *string:
		*p = value
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%q is not an integer", value)
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", value)
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", value)
		}
		*p = b
	case *time.Duration:
		d, err := ParseDuration(value)
		if err != nil {
			return err
		}
		*p = d
	case *[]string:
		// one value per line: a repeated flag's values, the environment's
		// lines, a configuration file's list
		*p = nil
		for _, v := range strings.Split(value, "\n") {
			if v = strings.TrimSpace(v); v != "" {
				*p = append(*p, v)
			}
		}
	default:
		panic("config: unsupported field type")
	}
	return nil
}

// Format renders the setting's value in c as Set accepts it.
func (s *Setting) Format(c *Config) string {
	switch p := s.field(c).(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return FormatDuration(*p)
	case *[]string:
		return strings.Join(*p, "\n")
	}
	panic("config: unsupported field type")
}

func (s *Setting) isList() bool {
	_, ok := s.field(&Config{}).(*[]string)
	return ok
}

func (s *Setting) isBool() bool {
	_, ok := s.field(&Config{}).(*bool)
	return ok
}

// ParseDuration accepts Go durations plus days ("14d", "1d12h"); "0"
// means zero.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "" {
		return 0, nil
	}
	var total time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 14d, 36h, 90m)", s)
		}
		total = time.Duration(days * float64(24*time.Hour))
		s = s[i+1:]
		if s == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 14d, 36h, 90m)", s)
	}
	return total + d, nil
}

// FormatDuration renders d compactly: "0", "14d", "1h", "90m", "1.5s".
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d == 0 {
		return "0"
	}
	if d > 0 && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Source says where a setting's value came from.
type Source string

const (
	FromDefault Source = "default"
	FromFile    Source = "file"
	FromEnv     Source = "env"
	FromFlag    Source = "flag"
)

// Loaded is the result of Load.
type Loaded struct {
	Config *Config
	// File is the configuration file read ("" if none).
	File string
	// Sources says where each setting (by key) came from.
	Sources map[string]Source
	// PrintConfig is set by --print-config.
	PrintConfig bool
}

// ErrHelp is returned when -h or --help was given (the usage has been
// written).
var ErrHelp = flag.ErrHelp

// Load builds the configuration of command name from the defaults, the
// configuration file, the environment (lookupEnv, usually os.LookupEnv)
// and args, then validates it. Usage and flag errors go to out.
func Load(name string, args []string, lookupEnv func(string) (string, bool), out io.Writer) (*Loaded, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	defaults := Defaults()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	flagValues := map[string]string{}
	var flagOrder []string
	for _, s := range Settings {
		def := s.Format(defaults)
		if def == "0" || def == "false" {
			def = "" // not printed as a default by -h
		}
		fs.Var(&rawFlag{s: s, def: def, values: flagValues, order: &flagOrder},
			s.Key, s.Help+" (env "+s.Env()+")")
	}
	configFile, _ := lookupEnv("REPORTDB_CONFIG")
	fs.StringVar(&configFile, "config", configFile, "YAML configuration `FILE`; its keys are the flag names (env REPORTDB_CONFIG)")
	printConfig := fs.Bool("print-config", false, "print the effective configuration as YAML (passwords masked) and exit")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: reportdb %s [flags]\n\nSettings come from, lowest precedence first: defaults, --config FILE, environment, flags.\n\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}

	l := &Loaded{Config: defaults, File: configFile, Sources: map[string]Source{}, PrintConfig: *printConfig}
	for _, s := range Settings {
		l.Sources[s.Key] = FromDefault
	}
	if configFile != "" {
		data, err := os.ReadFile(configFile)
		if err != nil {
			return nil, fmt.Errorf("configuration file: %w", err)
		}
		keys, err := applyYAML(l.Config, data)
		if err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", configFile, err)
		}
		for _, k := range keys {
			l.Sources[k] = FromFile
		}
	}
	for _, s := range Settings {
		if v, ok := lookupEnv(s.Env()); ok {
			if err := s.Set(l.Config, v); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Env(), err)
			}
			l.Sources[s.Key] = FromEnv
		}
	}
	for _, k := range flagOrder {
		s := Lookup(k)
		if err := s.Set(l.Config, flagValues[k]); err != nil {
			return nil, fmt.Errorf("--%s: %w", k, err)
		}
		l.Sources[k] = FromFlag
	}
	if err := l.Config.Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// rawFlag records a flag's raw value; Load applies it after the file and
// the environment.
type rawFlag struct {
	s      *Setting
	def    string
	values map[string]string
	order  *[]string
}

func (f *rawFlag) String() string {
	if f == nil || f.s == nil {
		return ""
	}
	if v, ok := f.values[f.s.Key]; ok {
		return v
	}
	return f.def
}

func (f *rawFlag) Set(v string) error {
	// check now so that flag errors name the flag at once
	if err := f.s.Set(&Config{}, v); err != nil {
		return err
	}
	if old, seen := f.values[f.s.Key]; !seen {
		*f.order = append(*f.order, f.s.Key)
	} else if f.s.isList() {
		v = old + "\n" + v // a list's flag is repeated
	}
	f.values[f.s.Key] = v
	return nil
}

func (f *rawFlag) IsBoolFlag() bool { return f.s.isBool() }

// applyYAML applies a configuration file: one mapping of setting keys to
// scalars. Unknown keys, duplicate keys and non-scalar values are errors.
func applyYAML(c *Config, data []byte) ([]string, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // empty file: all defaults
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: expected a mapping of settings (key: value)", root.Line)
	}
	seen := map[string]bool{}
	var keys []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		s := Lookup(k.Value)
		if s == nil {
			return nil, fmt.Errorf("line %d: unknown key %q%s", k.Line, k.Value, suggest(k.Value))
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: %q given twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		val := v.Value
		switch {
		case v.Kind == yaml.SequenceNode && s.isList():
			var vals []string
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("line %d: %s must be a list of values", e.Line, k.Value)
				}
				vals = append(vals, e.Value)
			}
			val = strings.Join(vals, "\n")
			v = &yaml.Node{Kind: yaml.ScalarNode, Value: val, Tag: "!!str"}
		case v.Kind != yaml.ScalarNode:
			return nil, fmt.Errorf("line %d: %s must be a single value", v.Line, k.Value)
		}
		if v.Tag == "!!null" {
			if _, ok := s.field(c).(*string); !ok {
				return nil, fmt.Errorf("line %d: %s has no value", v.Line, k.Value)
			}
			val = ""
		}
		if err := s.Set(c, val); err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
		keys = append(keys, k.Value)
	}
	return keys, nil
}

// suggest names a known key for a misspelt one (underscores, tls_ ...).
func suggest(key string) string {
	norm := strings.ToLower(strings.ReplaceAll(key, "_", "-"))
	if s := Lookup(norm); s != nil {
		return fmt.Sprintf(" (did you mean %q?)", s.Key)
	}
	return ""
}

// Validate checks the settings together.
func (c *Config) Validate() error {
	var errs []error
	if c.Listen == "" && c.TLSListen == "" {
		errs = append(errs, errors.New("no listener: set listen and/or tls-listen"))
	}
	for _, a := range []struct{ key, addr string }{{"listen", c.Listen}, {"tls-listen", c.TLSListen}, {"debug-listen", c.DebugListen}} {
		if a.addr != "" {
			if _, _, err := net.SplitHostPort(a.addr); err != nil {
				errs = append(errs, fmt.Errorf("%s %q: want HOST:PORT", a.key, a.addr))
			}
		}
	}
	if c.TLSListen != "" {
		for _, f := range []struct{ key, val string }{{"tls-cert", c.TLSCert}, {"tls-key", c.TLSKey}, {"tls-ca", c.TLSCA}} {
			if f.val == "" {
				errs = append(errs, fmt.Errorf("tls-listen needs %s", f.key))
			}
		}
	} else {
		for _, f := range []struct{ key, val string }{{"tls-cert", c.TLSCert}, {"tls-key", c.TLSKey}, {"tls-ca", c.TLSCA}, {"tls-crl", c.TLSCRL}, {"cert-allowlist", c.CertAllowlist}} {
			if f.val != "" {
				errs = append(errs, fmt.Errorf("%s is set but tls-listen is not (client certificates exist only on the HTTPS listener)", f.key))
			}
		}
	}
	switch c.Acknowledge {
	case "commit":
	case "spool":
		if c.SpoolMaxBytes == 0 {
			errs = append(errs, errors.New("acknowledge spool needs the spool: spool-max-bytes must not be 0"))
		}
	default:
		errs = append(errs, fmt.Errorf("acknowledge must be commit or spool, not %q", c.Acknowledge))
	}
	// clients compare it as a version (Puppetboard refuses to start on one
	// it cannot parse), so a typo must stop reportdb, not them
	if !puppetdbVersion.MatchString(c.PuppetDBVersion) {
		errs = append(errs, fmt.Errorf("puppetdb-version must be a version such as 7.12.1 or 8.9.1 (three numbers separated by dots), not %q", c.PuppetDBVersion))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log-format must be text or json, not %q", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level must be debug, info, warn or error, not %q", c.LogLevel))
	}
	positive := func(key string, ok bool) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s must be positive", key))
		}
	}
	positive("max-body-bytes", c.MaxBodyBytes > 0)
	positive("query-timeout", c.QueryTimeout > 0)
	positive("max-batch", c.MaxBatch > 0)
	positive("max-json-depth", c.MaxJSONDepth > 0)
	positive("sqlite-query-memory", c.SQLiteQueryMemory > 0)
	positive("read-header-timeout", c.ReadHeaderTimeout > 0)
	positive("read-timeout", c.ReadTimeout > 0)
	positive("idle-timeout", c.IdleTimeout > 0)
	positive("max-header-bytes", c.MaxHeaderBytes > 0)
	positive("max-url-bytes", c.MaxURLBytes > 0)
	positive("max-inflight-body-bytes", c.MaxInflightBodyBytes > 0)
	positive("gc-interval (to turn retention off, set report-ttl to 0)", c.GCInterval > 0)
	positive("unresponsive", c.Unresponsive > 0)
	positive("max-replica-lag", c.MaxReplicaLag > 0)
	if len(c.ReadDatabases) > 0 && c.Database == "" {
		errs = append(errs, errors.New("read-database needs database: read replicas are PostgreSQL standbys of it"))
	}
	for _, n := range []struct {
		key string
		ok  bool
	}{{"max-connections", c.MaxConnections >= 0}, {"writers", c.Writers >= 0}, {"report-ttl", c.ReportTTL >= 0}, {"node-ttl", c.NodeTTL >= 0}, {"node-purge-ttl", c.NodePurgeTTL >= 0}, {"node-purge-gc-batch-limit", c.NodePurgeBatch >= 0}, {"slow-query", c.SlowQuery >= 0},
		{"analyze-rows", c.AnalyzeRows >= 0}, {"spool-max-bytes", c.SpoolMaxBytes >= 0}, {"query-queue-wait", c.QueryQueueWait >= 0},
		{"max-concurrent-queries", c.MaxConcurrentQueries >= 0}, {"procs", c.Procs >= 0}, {"memory-limit", c.MemoryLimit >= 0}} {
		if !n.ok {
			errs = append(errs, fmt.Errorf("%s must not be negative", n.key))
		}
	}
	return errors.Join(errs...)
}

var puppetdbVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

var dsnPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// MaskDatabase hides the password of a database URL or keyword/value
// connection string and leaves the rest as written: the masked form goes
// into messages that must show the user what they typed (a URL of
// another database than PostgreSQL too).
func MaskDatabase(s string) string {
	if s == "" {
		return s
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && strings.Contains(s, "://") {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return dsnPassword.ReplaceAllString(s, "${1}xxxxx")
}

// Print writes the configuration as YAML that Load accepts (secrets
// masked), each value commented with where it came from.
func (l *Loaded) Print(w io.Writer) error {
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range Settings {
		v := s.Format(l.Config)
		if s.Key == "database" {
			v = MaskDatabase(v)
		}
		val := &yaml.Node{Kind: yaml.ScalarNode, Value: v}
		switch p := s.field(l.Config).(type) {
		case *[]string:
			val = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, e := range *p {
				if s.Secret {
					e = MaskDatabase(e)
				}
				val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e, Tag: "!!str"})
			}
		case *string:
			val.Tag = "!!str"
			if v == "" {
				val.Style = yaml.DoubleQuotedStyle
			}
		case *time.Duration:
			val.Tag = "!!str"
		}
		switch src := l.Sources[s.Key]; src {
		case FromEnv:
			val.LineComment = "env " + s.Env()
		case FromFile:
			val.LineComment = "file"
		case FromFlag:
			val.LineComment = "flag --" + s.Key
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Key}, val)
	}
	header := "# reportdb effective configuration (defaults < configuration file < environment < flags)\n"
	if l.File != "" {
		header += "# configuration file: " + l.File + "\n"
	}
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return err
	}
	return enc.Close()
}
