package pgtest

import (
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Cluster is a PostgreSQL cluster of one test's own, for tests that stop
// and start the server (the shared one must not be). It is made like the
// shared throwaway cluster (see cluster.go), as root or not, and deleted
// when the test ends.
type Cluster struct {
	s    *server
	dir  string
	port int
	url  string
}

// NewCluster starts a new cluster, or fails tb (naming the package to
// install when the PostgreSQL server is not).
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	s, err := findServer(debianBins, exec.LookPath)
	if err != nil {
		tb.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	c := &Cluster{s: s, dir: filepath.Join(os.TempDir(), fmt.Sprintf("reportdb-pgtest-%d-%x", os.Geteuid(), b))}
	if err := privateDir(c.dir, s); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stopCluster(s, c.dir)
		os.RemoveAll(c.dir)
	})
	if c.url, err = create(s, c.dir); err != nil {
		tb.Fatal(err)
	}
	u, err := url.Parse(c.url)
	if err != nil {
		tb.Fatal(err)
	}
	c.port, _ = strconv.Atoi(u.Port())
	return c
}

// URL is the cluster's admin URL (database postgres, as superuser).
func (c *Cluster) URL() string { return c.url }

// Start starts the cluster again after Stop, on the same port.
func (c *Cluster) Start(tb testing.TB) {
	tb.Helper()
	if err := startCluster(c.s, c.dir, c.port); err != nil {
		tb.Fatal(err)
	}
}

// Stop stops the cluster the fast way: connections are cut, as in a
// failover.
func (c *Cluster) Stop(tb testing.TB) {
	tb.Helper()
	if err := c.s.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		tb.Fatal(err)
	}
}
