package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"reportdb/postgres"
)

// procsChoice is how many Ps (GOMAXPROCS) serve runs with, and why.
type procsChoice struct {
	N      int
	Reason string
}

// chooseProcs decides serve's GOMAXPROCS. cpus is Go's own choice (the
// CPUs it may use, under a cgroup limit the limit; or the GOMAXPROCS
// variable, envSet). An explicit setting wins; the variable comes next.
//
// Otherwise, with PostgreSQL on this machine, reportdb leaves it a CPU.
// Each query is a round trip in which reportdb waits for the database;
// a Go P with nothing to run spins looking for work (nanosleep, futex
// wake-ups: ~120 and ~100 per request under strace) on the CPU the
// database needs right then. On this project's 2-core machines, medium
// fleet, two rounds alternated: 13 of
// 16 sequential p50s lower with 1 P than with 2 (the title regex 10.8 ->
// 8.7 ms), ingest 903/1164 -> 1324/1192 reports/s, the concurrent mix
// 667/639 -> 715/648 requests/s. The embedded store runs inside the
// process and a remote database on other CPUs: Go's default there.
//
// With acknowledge spool (spoolFirst) every submission waits for an fsync
// of the spool, which on this project's virtual disks keeps the calling
// thread on the CPU for 0.3-0.45 ms; with one P the other submissions and
// the delivery wait that long for it. Medium fleet, 8 connections, three
// interleaved rounds: 718/835/855 reports/s
// with 1 P, 1,316/1,130/1,144 with 2, commit 940/1,025/888. So spool
// takes every CPU, and its sequential queries pay what 1 P saves them.
func chooseProcs(setting, cpus int, envSet bool, database string, spoolFirst bool) procsChoice {
	switch {
	case setting > 0:
		return procsChoice{setting, "procs setting"}
	case envSet:
		return procsChoice{cpus, "GOMAXPROCS variable"}
	case database == "":
		return procsChoice{cpus, "CPUs available (embedded database)"}
	case !postgres.OnThisHost(database):
		return procsChoice{cpus, "CPUs available (PostgreSQL on another host)"}
	case cpus <= 1:
		return procsChoice{1, "CPUs available (1)"}
	case spoolFirst:
		return procsChoice{cpus, "CPUs available (acknowledge spool: submissions wait for the spool's fsyncs)"}
	}
	return procsChoice{cpus - 1, fmt.Sprintf("CPUs available (%d) less one for PostgreSQL on this host", cpus)}
}

// setProcs applies chooseProcs to this process.
func setProcs(setting int, database string, spoolFirst bool) procsChoice {
	_, envSet := os.LookupEnv("GOMAXPROCS")
	cpus := runtime.GOMAXPROCS(0)
	c := chooseProcs(setting, cpus, envSet, database, spoolFirst)
	if c.N != cpus { // setting it, even unchanged, ends Go's own updates to a cgroup limit
		runtime.GOMAXPROCS(c.N)
	}
	return c
}

// setMemoryLimit sets Go's soft memory limit to setting unless the
// GOMEMLIMIT variable is set. reportdb's live heap is tens of megabytes;
// what can swell it is a crowd of large request bodies, bounded by
// max-inflight-body-bytes. Near the limit the collector runs more often
// and returns freed pages to the system, so such a burst does not leave
// the process at several times its budget (GOGC alone lets the heap grow
// to 3x what is live).
func setMemoryLimit(setting int64) (int64, string) {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT variable"
	}
	if setting <= 0 {
		return 0, ""
	}
	debug.SetMemoryLimit(setting)
	return setting, "memory-limit"
}
