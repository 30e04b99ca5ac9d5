package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"reportdb/internal/config"
)

// TestPuppetDBVersionSetting: --puppetdb-version reaches the version and
// status answers of the running server, and a value that is not a version
// stops serve before it listens.
func TestPuppetDBVersionSetting(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.PuppetDBVersion = "8.9.1"
	base := "http://" + startInProcess(t, cfg).HTTP
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := get("/pdb/meta/v1/version"); got != "{\n  \"version\" : \"8.9.1\"\n}" {
		t.Errorf("version: %q", got)
	}
	if got := get("/status/v1/services/puppetdb-status"); !strings.HasPrefix(got, `{"service_version":"8.9.1",`) {
		t.Errorf("puppetdb-status: %s", got)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"serve", "--puppetdb-version", "8.x", "--data-dir", t.TempDir()}, &out, &errb); rc != 2 ||
		!strings.Contains(errb.String(), `puppetdb-version must be a version such as 7.12.1 or 8.9.1 (three numbers separated by dots), not "8.x"`) {
		t.Fatalf("bad version: exit %d %s", rc, errb.String())
	}
}
