package pgtest

// Replication: a streaming hot standby of a test's own cluster, promoted or
// crashed at the test's will, for the read-replica and failover tests.

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Standby makes a streaming hot standby of c: a base backup of c
// (pg_basebackup -R -X stream, over the replication connection that
// initdb's pg_hba.conf allows from 127.0.0.1 with the password) in a
// directory of its own, started on a free port with hot_standby_feedback
// and pinged. It has c's superuser and password, is deleted when the test
// ends, and is never a synchronous primary itself (a SetSynchronous of c
// made before the copy is reset in it), so that it can be promoted alone.
func (c *Cluster) Standby(tb testing.TB) *Cluster {
	tb.Helper()
	var b [6]byte
	rand.Read(b[:])
	sb := &Cluster{s: c.s, dir: filepath.Join(os.TempDir(), fmt.Sprintf("reportdb-pgtest-%d-%x", os.Geteuid(), b))}
	if err := privateDir(sb.dir, c.s); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stopCluster(sb.s, sb.dir)
		os.RemoveAll(sb.dir)
	})
	data := filepath.Join(sb.dir, "data")
	if err := c.s.run("pg_basebackup", "-D", data, "-R", "-X", "stream", "-c", "fast", "--no-sync",
		"-d", c.url); err != nil {
		tb.Fatal(err)
	}
	// The copied postgresql.conf names c's socket directory: the last
	// setting wins. postgresql.auto.conf, read after it, holds c's ALTER
	// SYSTEM settings and the primary_conninfo of -R.
	conf := fmt.Sprintf("\n# standby of %s\nunix_socket_directories = '%s'\nhot_standby = on\nhot_standby_feedback = on\n",
		c.HostPort(), strings.ReplaceAll(sb.dir, "'", "''"))
	if err := appendFile(filepath.Join(data, "postgresql.conf"), conf); err != nil {
		tb.Fatal(err)
	}
	if err := appendFile(filepath.Join(data, "postgresql.auto.conf"), "synchronous_standby_names = ''\n"); err != nil {
		tb.Fatal(err)
	}
	u, err := url.Parse(c.url)
	if err != nil {
		tb.Fatal(err)
	}
	// The free port may be taken between the probe and the start: retry.
	for attempt := 0; ; attempt++ {
		if sb.port, err = freePort(); err != nil {
			tb.Fatal(err)
		}
		if err = startCluster(sb.s, sb.dir, sb.port); err == nil {
			u.Host = sb.HostPort()
			sb.url = u.String()
			if err = ping(sb.url); err == nil {
				return sb
			}
		}
		if attempt == 4 {
			log, _ := readFile(filepath.Join(sb.dir, "log"))
			if len(log) > 2000 {
				log = log[len(log)-2000:]
			}
			tb.Fatalf("start the standby of %s in %s: %v\n%s", c.HostPort(), sb.dir, err, log)
		}
		sb.s.run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop") // if it started; the data stay
	}
}

// Promote makes a standby the primary (pg_ctl promote, waiting until it
// accepts writes).
func (c *Cluster) Promote(tb testing.TB) {
	tb.Helper()
	if err := c.s.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-w", "-t", "60", "promote"); err != nil {
		tb.Fatal(err)
	}
}

// Kill crashes the cluster as a crash of its machine would: the postmaster
// and every process it started get SIGKILL (nothing is flushed, no
// connection is told), and Kill returns once the port refuses connections.
// A killed cluster is not started again: it stays dead until the test ends.
func (c *Cluster) Kill(tb testing.TB) {
	tb.Helper()
	data := filepath.Join(c.dir, "data")
	pidFile, err := readFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		tb.Fatalf("kill the cluster on %s: %v", c.HostPort(), err)
	}
	lines := strings.Split(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 1 {
		tb.Fatalf("kill the cluster on %s: postmaster.pid says %q", c.HostPort(), lines[0])
	}
	// Stopped first, it forks no new child while they are listed; once it
	// is dead they would be re-parented and could not be told apart.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		tb.Fatalf("kill the cluster on %s: postmaster %d: %v", c.HostPort(), pid, err)
	}
	children := childrenOf(pid)
	syscall.Kill(pid, syscall.SIGKILL)
	for _, p := range children {
		syscall.Kill(p, syscall.SIGKILL)
	}
	// The shared memory segment outlives its processes; the cluster is
	// never started again to remove it (line 7: key and id).
	if len(lines) > 6 {
		if f := strings.Fields(lines[6]); len(f) == 2 {
			if id, err := strconv.Atoi(f[1]); err == nil {
				tb.Cleanup(func() { syscall.Syscall(syscall.SYS_SHMCTL, uintptr(id), 0 /* IPC_RMID */, 0) })
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", c.HostPort(), time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			tb.Fatalf("the killed cluster on %s still accepts connections", c.HostPort())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Its processes are gone once /proc has none of them (zombies of the
	// postmaster's children are reaped by init).
	for _, p := range append(children, pid) {
		for time.Now().Before(deadline) && processAlive(p) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := readFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// processAlive: pid exists and is not a zombie.
func processAlive(pid int) bool {
	stat, err := readFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// Port is the cluster's TCP port on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// HostPort is "127.0.0.1:PORT", the cluster's address in a URL.
func (c *Cluster) HostPort() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)) }

// SetSynchronous makes every commit on the primary c wait until a standby
// has flushed it (synchronous_standby_names = '*': a failover loses no
// acknowledged commit), or not. Standbys made later do not inherit it.
func (c *Cluster) SetSynchronous(tb testing.TB, on bool) {
	tb.Helper()
	if on {
		c.Exec(tb, "ALTER SYSTEM SET synchronous_standby_names = '*'")
	} else {
		c.Exec(tb, "ALTER SYSTEM RESET synchronous_standby_names")
	}
	c.Exec(tb, "SELECT pg_reload_conf()")
	// pg_reload_conf only signals the postmaster: wait until a new
	// session sees the setting.
	want := map[bool]string{true: "*", false: ""}[on]
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got string
		c.QueryRow(tb, "SHOW synchronous_standby_names", &got)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("synchronous_standby_names on %s is %q after the reload, want %q", c.HostPort(), got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Exec runs sql (statements without arguments) on the cluster's postgres
// database as superuser.
func (c *Cluster) Exec(tb testing.TB, sql string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url)
	if err != nil {
		tb.Fatalf("%s: %v", c.HostPort(), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		tb.Fatalf("%s: %s: %v", c.HostPort(), sql, err)
	}
}

// QueryRow runs a query of one row on the cluster's postgres database as
// superuser and scans it into dest.
func (c *Cluster) QueryRow(tb testing.TB, sql string, dest ...any) {
	tb.Helper()
	if err := c.TryQueryRow(sql, dest...); err != nil {
		tb.Fatalf("%s: %s: %v", c.HostPort(), sql, err)
	}
}

// TryQueryRow is QueryRow returning the error, for polling a server that
// may be down.
func (c *Cluster) TryQueryRow(sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}
