package pgtest

// The throwaway cluster.
//
// go test runs each package's test binary as a process of its own, several
// at a time, so "one cluster for the whole run" is shared through a
// directory, $TMPDIR/reportdb-pgtest-<uid>, private to the user that owns
// the cluster (postgres when the tests run as root: PostgreSQL refuses to
// run as root). In it:
//
//	start.lock   held exclusively while a cluster is looked for, created or stopped
//	users.lock   held shared by every process that uses the cluster, for the
//	             rest of its life: the kernel drops it however the process ends
//	reaper.lock  held by the reaper as long as it watches the cluster
//	url          the admin URL, with the cluster's password
//	data/, log   the cluster and its server log
//
// The first process that finds no cluster answering creates one (initdb
// with --no-sync takes well under a second) and starts the reaper: a copy
// of its own test binary (see init) in a session of its own, so that an
// interrupted go test does not take it along. Once no process has held
// users.lock for reapGrace, the reaper stops the cluster and deletes its
// data; the directory keeps only the empty lock files. The grace lets the
// packages of one run that do not overlap in time share the cluster too.
//
// The server listens on 127.0.0.1 (a test checks that loopback connections
// are plain TCP) and wants a password, random per cluster: trust on a TCP
// port would let any local user in as superuser, which can run programs as
// the cluster's owner.
//
// Files are read, written and locked with syscall rather than package os:
// go test's result cache notes every file a test opens through os and would
// never reuse a result that read this directory, which changes every run.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	reaperEnv    = "REPORTDB_PGTEST_REAPER" // the cluster directory, for the reaper
	reaperBinEnv = "REPORTDB_PGTEST_BIN"    // the PostgreSQL binaries, for the reaper
	reapPoll     = 500 * time.Millisecond
	reapGrace    = 5 * time.Second
	debianBins   = "/usr/lib/postgresql/*/bin/initdb"
)

// A test binary started as the reaper does only that.
func init() {
	if dir := os.Getenv(reaperEnv); dir != "" {
		reap(dir, &server{bin: os.Getenv(reaperBinEnv), asPostgres: os.Geteuid() == 0})
		os.Exit(0)
	}
}

// throwaway returns the admin URL of the shared throwaway cluster, started
// if need be, and the directory it lives in. The process uses it until it
// ends.
func throwaway() (admin, dir string, err error) {
	s, err := findServer(debianBins, exec.LookPath)
	if err != nil {
		return "", "", err
	}
	dir = filepath.Join(os.TempDir(), fmt.Sprintf("reportdb-pgtest-%d", os.Geteuid()))
	admin, _, err = acquire(s, dir)
	return admin, dir, err
}

// server is a set of PostgreSQL server binaries and who runs them.
type server struct {
	bin        string // the directory of initdb and pg_ctl
	asPostgres bool   // run them as user postgres, through runuser
	uid, gid   int    // who owns the cluster
}

// findServer picks the newest PostgreSQL installed where Debian puts them
// (pattern), else initdb on $PATH (other systems).
func findServer(pattern string, lookPath func(string) (string, error)) (*server, error) {
	s := &server{}
	best := -1
	matches, _ := filepath.Glob(pattern)
	for _, m := range matches {
		bin := filepath.Dir(m)
		// /usr/lib/postgresql/<version>/bin: "15" > "9.6", compared as numbers
		v := 0
		for i, part := range strings.SplitN(filepath.Base(filepath.Dir(bin)), ".", 2) {
			n, _ := strconv.Atoi(part)
			v += n * []int{1000, 1}[i]
		}
		if v > best && executable(filepath.Join(bin, "pg_ctl")) {
			best, s.bin = v, bin
		}
	}
	if s.bin == "" {
		if p, err := lookPath("initdb"); err == nil && executable(filepath.Join(filepath.Dir(p), "pg_ctl")) {
			s.bin = filepath.Dir(p)
		}
	}
	if s.bin == "" {
		return nil, fmt.Errorf("the PostgreSQL server is not installed (no %s, no initdb on $PATH): install the Debian package postgresql (apt-get install postgresql), or set %s to the URL of a server", pattern, EnvServer)
	}
	s.uid, s.gid = os.Geteuid(), os.Getegid()
	if s.uid == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no user postgres to run it as (the Debian package postgresql creates one): %v", err)
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			return nil, fmt.Errorf("PostgreSQL refuses to run as root, and runuser (util-linux) is missing to run it as user postgres")
		}
		s.asPostgres = true
		s.uid, _ = strconv.Atoi(u.Uid)
		s.gid, _ = strconv.Atoi(u.Gid)
	}
	return s, nil
}

func executable(path string) bool {
	return syscall.Access(path, 1 /* X_OK */) == nil
}

// run runs one of the server's programs as the cluster's owner.
func (s *server) run(prog string, args ...string) error {
	path := filepath.Join(s.bin, prog)
	var cmd *exec.Cmd
	if s.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// acquire returns the admin URL of the cluster in dir, created and started
// if none answers, and registers the caller as one of its users until
// release (in tests) or the end of the process.
func acquire(s *server, dir string) (admin string, release func(), err error) {
	if err := privateDir(dir, s); err != nil {
		return "", nil, err
	}
	start, err := lockFile(filepath.Join(dir, "start.lock"), syscall.LOCK_EX)
	if err != nil {
		return "", nil, err
	}
	defer unlockClose(start)
	// Never blocks: the reaper holds users.lock exclusively only while it
	// holds start.lock too.
	users, err := lockFile(filepath.Join(dir, "users.lock"), syscall.LOCK_SH)
	if err != nil {
		return "", nil, err
	}
	release = func() { unlockClose(users) }
	if b, err := readFile(filepath.Join(dir, "url")); err == nil && ping(string(b)) == nil {
		admin = string(b)
	} else if admin, err = create(s, dir); err != nil {
		release()
		return "", nil, err
	}
	// A cluster whose reaper is gone (killed) would never be stopped.
	if r, err := lockFile(filepath.Join(dir, "reaper.lock"), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		unlockClose(r)
		if err := spawnReaper(dir, s.bin); err != nil {
			release()
			return "", nil, err
		}
	}
	return admin, release, nil
}

// privateDir makes dir, owned by the cluster's owner and private to it: it
// is in a world-writable place, and will hold the cluster's password.
func privateDir(dir string, s *server) error {
	if err := syscall.Mkdir(dir, 0o700); err == nil {
		if err := syscall.Chown(dir, s.uid, s.gid); err != nil {
			return fmt.Errorf("chown %s: %v", dir, err)
		}
	} else if err != syscall.EEXIST {
		return fmt.Errorf("mkdir %s: %v", dir, err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return fmt.Errorf("stat %s: %v", dir, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || int(st.Uid) != s.uid || st.Mode&0o077 != 0 {
		return fmt.Errorf("%s is not a directory private to uid %d: remove it", dir, s.uid)
	}
	return nil
}

// create initialises and starts a new cluster in dir, replacing whatever an
// earlier one left, and returns its admin URL.
func create(s *server, dir string) (string, error) {
	data, logFile, urlFile := filepath.Join(dir, "data"), filepath.Join(dir, "log"), filepath.Join(dir, "url")
	stopCluster(s, dir)
	syscall.Unlink(urlFile)
	syscall.Unlink(logFile)
	var b [16]byte
	rand.Read(b[:])
	password := hex.EncodeToString(b[:])
	pwFile := filepath.Join(dir, "pwfile")
	if err := writeFile(pwFile, password+"\n", s); err != nil {
		return "", err
	}
	err := s.run("initdb", "-D", data, "-U", "postgres", "--pwfile", pwFile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
	syscall.Unlink(pwFile)
	if err != nil {
		return "", err
	}
	// The socket is in the private directory, hence trust for it. The data
	// are thrown away: fsync would only slow the tests down. Commits stay
	// synchronous: VACUUM cannot mark a page all-visible while the commit
	// of a row on it is not flushed, and a test checks that it does. Without
	// autovacuum, as on the CI's server: a worker that happens to run
	// during a test holds back what VACUUM may mark all-visible and
	// changes statistics, and the tests check both.
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n"+
		"max_connections = 200\nfsync = off\nfull_page_writes = off\nautovacuum = off\n",
		strings.ReplaceAll(dir, "'", "''"))
	if err := appendFile(filepath.Join(data, "postgresql.conf"), conf); err != nil {
		return "", err
	}
	// The free port may be taken between the probe and the start: retry.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		if err = startCluster(s, dir, port); err == nil {
			admin := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", password, port)
			if err = ping(admin); err == nil {
				return admin, writeFile(urlFile, admin, nil)
			}
		}
		if attempt == 4 {
			log, _ := readFile(logFile)
			if len(log) > 2000 {
				log = log[len(log)-2000:]
			}
			stopCluster(s, dir)
			return "", fmt.Errorf("start the throwaway cluster in %s: %v\n%s", dir, err, log)
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startCluster starts the cluster in dir on port.
func startCluster(s *server, dir string, port int) error {
	return s.run("pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "log"),
		"-o", fmt.Sprintf("-p %d", port), "-w", "-t", "60", "start")
}

// stopCluster stops the cluster in dir, if it runs, and deletes its data.
func stopCluster(s *server, dir string) {
	data := filepath.Join(dir, "data")
	var st syscall.Stat_t
	if syscall.Lstat(filepath.Join(data, "postmaster.pid"), &st) == nil {
		s.run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
	}
	os.RemoveAll(data)
}

// spawnReaper starts the reaper of the cluster in dir.
func spawnReaper(dir, bin string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), reaperEnv+"="+dir, reaperBinEnv+"="+bin)
	// Its own session: a ^C to go test must not kill it before it cleans
	// up. No stdout or stderr: go test would wait for it to close them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the throwaway cluster's reaper: %v", err)
	}
	go cmd.Wait()
	return nil
}

// reap watches the cluster in dir and stops it once it has had no user for
// reapGrace.
func reap(dir string, s *server) {
	me, err := lockFile(filepath.Join(dir, "reaper.lock"), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		return // another reaper watches the cluster
	}
	var idle time.Time
	for {
		time.Sleep(reapPoll)
		start, err := lockFile(filepath.Join(dir, "start.lock"), syscall.LOCK_EX)
		if err != nil {
			unlockClose(me)
			return
		}
		users, err := lockFile(filepath.Join(dir, "users.lock"), syscall.LOCK_EX|syscall.LOCK_NB)
		done := false
		switch {
		case err != nil:
			idle = time.Time{}
		case idle.IsZero():
			idle = time.Now()
		case time.Since(idle) >= reapGrace:
			stopCluster(s, dir)
			syscall.Unlink(filepath.Join(dir, "url"))
			done = true
		}
		if _, err := readFile(filepath.Join(dir, "url")); err != nil {
			done = true // nothing (left) to watch
		}
		if users >= 0 {
			unlockClose(users)
		}
		if done {
			// Before start.lock: the next user, which takes start.lock, must
			// see that this cluster has no reaper any more.
			unlockClose(me)
			unlockClose(start)
			return
		}
		unlockClose(start)
	}
}

// lockFile opens (creating) and flocks path; -1 when it cannot.
func lockFile(path string, how int) (int, error) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, fmt.Errorf("open %s: %v", path, err)
	}
	for {
		err = syscall.Flock(fd, how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("lock %s: %v", path, err)
	}
	return fd, nil
}

func unlockClose(fd int) {
	syscall.Flock(fd, syscall.LOCK_UN)
	syscall.Close(fd)
}

func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// writeFile writes a private file, owned by the cluster's owner if s is
// not nil.
func writeFile(path, content string, s *server) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	defer syscall.Close(fd)
	if s != nil {
		if err := syscall.Fchown(fd, s.uid, s.gid); err != nil {
			return fmt.Errorf("chown %s: %v", path, err)
		}
	}
	return writeAll(fd, path, content)
}

func appendFile(path, content string) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("append to %s: %v", path, err)
	}
	defer syscall.Close(fd)
	return writeAll(fd, path, content)
}

func writeAll(fd int, path, content string) error {
	b := []byte(content)
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write %s: %v", path, err)
		}
		b = b[n:]
	}
	return nil
}
