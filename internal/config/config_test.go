package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reportdb.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "listen: 127.0.0.1:1\nmax-batch: 10\nreport-ttl: 30d\nwriters: 2\nslow-query: 250ms\ncorrective-counts: true\n")
	l, err := Load("serve", []string{"--listen", "127.0.0.1:3", "--config", file}, env(map[string]string{
		"REPORTDB_LISTEN": "127.0.0.1:2", "REPORTDB_MAX_BATCH": "20", "REPORTDB_GC_INTERVAL": "2h",
	}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	if c.Listen != "127.0.0.1:3" || c.MaxBatch != 20 || c.ReportTTL != 30*24*time.Hour || c.Writers != 2 ||
		c.GCInterval != 2*time.Hour || c.SlowQuery != 250*time.Millisecond || !c.CorrectiveCounts || c.DataDir != "./data" {
		t.Fatalf("%+v", c)
	}
	want := map[string]Source{"listen": FromFlag, "max-batch": FromEnv, "report-ttl": FromFile, "gc-interval": FromEnv, "data-dir": FromDefault}
	for k, s := range want {
		if l.Sources[k] != s {
			t.Errorf("source of %s: %s, want %s", k, l.Sources[k], s)
		}
	}
	// REPORTDB_CONFIG names the file when --config does not
	l, err = Load("serve", nil, env(map[string]string{"REPORTDB_CONFIG": file}), &bytes.Buffer{})
	if err != nil || l.Config.MaxBatch != 10 || l.File != file {
		t.Fatalf("REPORTDB_CONFIG: %v %+v", err, l)
	}
}

func TestStrictFile(t *testing.T) {
	for body, want := range map[string]string{
		"listen: x:1\nlisten_addr: y\n":         `line 2: unknown key "listen_addr"`,
		"max_batch: 3\n":                        `did you mean "max-batch"`,
		"max-batch: lots\n":                     `line 1: max-batch: "lots" is not an integer`,
		"report-ttl: 2 weeks\n":                 "invalid duration",
		"listen: [a, b]\n":                      "must be a single value",
		"listen: a:1\nlisten: b:2\n":            "given twice",
		"- listen\n":                            "expected a mapping",
		"max-batch:\n":                          "has no value",
		"listen: a:1\n---\nlisten: b:1\n":       "more than one YAML document",
		"tls-listen: 127.0.0.1:8081\n":          "tls-listen needs tls-cert",
		"listen: \"\"\n":                        "no listener",
		"cert-allowlist: /etc/allow\n":          "tls-listen is not",
		"log-format: xml\n":                     "log-format must be",
		"gc-interval: 0\n":                      "gc-interval",
		"corrective-counts: maybe\n":            "not a boolean",
		"debug-listen: localhost\n":             "want HOST:PORT",
		"listen: ''\ntls-listen: 127.0.0.1:1\n": "tls-listen needs tls-key",
	} {
		_, err := Load("serve", []string{"--config", writeFile(t, body)}, env(nil), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
	// empty file and null values for strings are fine
	for _, body := range []string{"", "# nothing\n", "debug-listen:\n"} {
		if _, err := Load("serve", []string{"--config", writeFile(t, body)}, env(nil), &bytes.Buffer{}); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

func TestEnvAndFlagErrors(t *testing.T) {
	if _, err := Load("serve", nil, env(map[string]string{"REPORTDB_MAX_BATCH": "x"}), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "REPORTDB_MAX_BATCH") {
		t.Errorf("env: %v", err)
	}
	var out bytes.Buffer
	if _, err := Load("serve", []string{"--query-timeout", "soon"}, env(nil), &out); err == nil || !strings.Contains(out.String(), "query-timeout") {
		t.Errorf("flag: %v %s", err, out.String())
	}
	if _, err := Load("serve", []string{"extra"}, env(nil), &out); err == nil {
		t.Error("extra argument accepted")
	}
	// --listen "" turns plain HTTP off (TLS-only)
	l, err := Load("serve", []string{"--listen", "", "--tls-listen", "127.0.0.1:8081", "--tls-cert", "c", "--tls-key", "k", "--tls-ca", "ca"}, env(nil), &out)
	if err != nil || l.Config.Listen != "" {
		t.Fatalf("TLS only: %v", err)
	}
	// boolean flags take no argument
	l, err = Load("serve", []string{"--corrective-counts", "--print-config"}, env(nil), &out)
	if err != nil || !l.Config.CorrectiveCounts || !l.PrintConfig {
		t.Fatalf("bool flags: %v %+v", err, l)
	}
}

// TestPrintRoundTrip: --print-config output is a configuration file that
// gives the same configuration, with the database password masked.
func TestPrintRoundTrip(t *testing.T) {
	l, err := Load("serve", []string{"--database", "postgres://rdb:s3cret@db.example:5432/reportdb?sslmode=require",
		"--read-database", "postgres://rdb:s3cret@standby1:5432/reportdb", "--read-database", "postgres://standby2/reportdb",
		"--report-ttl", "36h", "--gc-interval", "90m", "--debug-listen", "127.0.0.1:6060", "--slow-query", "1.5s"},
		env(map[string]string{"REPORTDB_DATA_DIR": "/var/lib/reportdb"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := l.Print(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, "s3cret") || !strings.Contains(s, "postgres://rdb:xxxxx@db.example:5432/reportdb?sslmode=require") {
		t.Fatalf("password not masked:\n%s", s)
	}
	for _, want := range []string{"report-ttl: 36h # flag --report-ttl", "gc-interval: 1h30m", "data-dir: /var/lib/reportdb # env REPORTDB_DATA_DIR",
		`tls-listen: ""`, "max-body-bytes: 67108864", "slow-query: 1.5s", "query-timeout: 2m\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	back, err := Load("serve", []string{"--config", writeFile(t, s)}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatalf("printed configuration does not load: %v\n%s", err, s)
	}
	want := *l.Config
	want.Database = MaskDatabase(want.Database)
	want.ReadDatabases = []string{"postgres://rdb:xxxxx@standby1:5432/reportdb", "postgres://standby2/reportdb"}
	if !reflect.DeepEqual(*back.Config, want) {
		t.Fatalf("round trip:\n%+v\n%+v", *back.Config, want)
	}
}

// TestListSetting: read-database is repeated on the command line, one per
// line in the environment, a list (or one value) in the file; a flag
// replaces the environment's list, and it needs database.
func TestListSetting(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		file string
		want []string
	}{
		{args: []string{"--read-database", "postgres://a/db", "--read-database", "postgres://b/db"}, want: []string{"postgres://a/db", "postgres://b/db"}},
		{env: map[string]string{"REPORTDB_READ_DATABASE": "postgres://a/db\n postgres://b/db\n"}, want: []string{"postgres://a/db", "postgres://b/db"}},
		{file: "read-database:\n  - postgres://a/db\n  - postgres://b/db\n", want: []string{"postgres://a/db", "postgres://b/db"}},
		{file: "read-database: postgres://a/db\n", want: []string{"postgres://a/db"}},
		{env: map[string]string{"REPORTDB_READ_DATABASE": "postgres://a/db"}, args: []string{"--read-database", "postgres://c/db"}, want: []string{"postgres://c/db"}},
	} {
		args := append([]string{"--database", "postgres://p/db"}, c.args...)
		if c.file != "" {
			args = append(args, "--config", writeFile(t, c.file))
		}
		l, err := Load("serve", args, env(c.env), &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !reflect.DeepEqual(l.Config.ReadDatabases, c.want) {
			t.Errorf("%+v: read-database %q, want %q", c, l.Config.ReadDatabases, c.want)
		}
	}
	if _, err := Load("serve", []string{"--read-database", "postgres://a/db"}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "read-database needs database") {
		t.Errorf("read-database without database: %v", err)
	}
	if _, err := Load("serve", []string{"--config", writeFile(t, "read-database:\n  - [x]\n")}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "list of values") {
		t.Errorf("nested list: %v", err)
	}
	if _, err := Load("serve", []string{"--config", writeFile(t, "report-ttl: [1d]\n")}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "single value") {
		t.Errorf("list for a scalar setting: %v", err)
	}
}

func TestMaskDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"":                                     "",
		"postgres://u@h/db":                    "postgres://u@h/db",
		"postgres://u:p@h/db":                  "postgres://u:xxxxx@h/db",
		"postgresql://h/db?password=p&x=1":     "postgresql://h/db?password=xxxxx&x=1",
		"host=h user=u password=secret dbname": "host=h user=u password=xxxxx dbname",
		"host=h password='a b' dbname=d":       "host=h password=xxxxx dbname=d",
		"mysql://u:p@localhost/db":             "mysql://u:xxxxx@localhost/db",
		"mysql://u@localhost/db":               "mysql://u@localhost/db",
	} {
		if got := MaskDatabase(in); got != want {
			t.Errorf("MaskDatabase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "14d": 14 * 24 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "1.5s": 1500 * time.Millisecond} {
		d, err := ParseDuration(in)
		if err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v %v", in, d, err)
		}
		if back, _ := ParseDuration(FormatDuration(d)); back != d {
			t.Errorf("FormatDuration(%v) = %q does not parse back", d, FormatDuration(d))
		}
	}
	if FormatDuration(time.Hour) != "1h" || FormatDuration(2*time.Minute) != "2m" || FormatDuration(14*24*time.Hour) != "14d" || FormatDuration(90*time.Minute) != "1h30m" {
		t.Error("FormatDuration")
	}
}

// TestDocumented: the example configuration (deploy/reportdb.yaml)
// documents every setting, and the example loads (the reference page is
// TestReference's).
func TestDocumented(t *testing.T) {
	example, err := os.ReadFile("../../deploy/reportdb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Settings {
		if !strings.Contains(string(example), "\n"+s.Key+":") && !strings.Contains(string(example), "\n# "+s.Key+":") {
			t.Errorf("deploy/reportdb.yaml does not document %s", s.Key)
		}
	}
	if _, err := applyYAML(Defaults(), example); err != nil {
		t.Errorf("deploy/reportdb.yaml: %v", err)
	}
}

// TestAcknowledge: acknowledge takes commit (the default) or spool, and
// spool needs the spool.
func TestAcknowledge(t *testing.T) {
	var out bytes.Buffer
	l, err := Load("serve", nil, env(nil), &out)
	if err != nil || l.Config.Acknowledge != "commit" {
		t.Fatalf("default: %v %q", err, l.Config.Acknowledge)
	}
	l, err = Load("serve", nil, env(map[string]string{"REPORTDB_ACKNOWLEDGE": "spool"}), &out)
	if err != nil || l.Config.Acknowledge != "spool" {
		t.Fatalf("spool: %v", err)
	}
	if _, err := Load("serve", []string{"--acknowledge", "fsync"}, env(nil), &out); err == nil || !strings.Contains(err.Error(), "acknowledge must be commit or spool") {
		t.Errorf("unknown value: %v", err)
	}
	if _, err := Load("serve", []string{"--acknowledge", "spool", "--spool-max-bytes", "0"}, env(nil), &out); err == nil || !strings.Contains(err.Error(), "needs the spool") {
		t.Errorf("spool without a spool: %v", err)
	}
}

// TestPuppetDBVersion: the claimed PuppetDB version defaults to the one the
// conformance answers were recorded from, comes from flag, environment or
// file, and anything but MAJOR.MINOR.PATCH stops the start with a message
// naming the setting.
func TestPuppetDBVersion(t *testing.T) {
	l, err := Load("serve", nil, env(nil), &bytes.Buffer{})
	if err != nil || l.Config.PuppetDBVersion != "7.12.1" {
		t.Fatalf("default: %v %q", err, l.Config.PuppetDBVersion)
	}
	l, err = Load("serve", []string{"--puppetdb-version", "8.9.1"}, env(nil), &bytes.Buffer{})
	if err != nil || l.Config.PuppetDBVersion != "8.9.1" {
		t.Fatalf("flag: %v", err)
	}
	l, err = Load("serve", nil, env(map[string]string{"REPORTDB_PUPPETDB_VERSION": "8.15.0"}), &bytes.Buffer{})
	if err != nil || l.Config.PuppetDBVersion != "8.15.0" {
		t.Fatalf("env: %v", err)
	}
	l, err = Load("serve", []string{"--config", writeFile(t, "puppetdb-version: 8.10.0\n")}, env(nil), &bytes.Buffer{})
	if err != nil || l.Config.PuppetDBVersion != "8.10.0" {
		t.Fatalf("file: %v", err)
	}
	for _, bad := range []string{"8", "8.9", "8.x.1", "v8.9.1", "8.9.1-SNAPSHOT", " 8.9.1", "8.9.1.0", ""} {
		_, err := Load("serve", []string{"--puppetdb-version", bad}, env(nil), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "puppetdb-version must be a version such as") || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
