package main

import (
	"fmt"
	"os"
	"runtime"

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
// fleet, two rounds alternated (docs/scaling/10k-stop24/procs-ab): 13 of
// 16 sequential p50s lower with 1 P than with 2 (the title regex 10.8 ->
// 8.7 ms), ingest 903/1164 -> 1324/1192 reports/s, the concurrent mix
// 667/639 -> 715/648 requests/s. The embedded store runs inside the
// process and a remote database on other CPUs: Go's default there.
func chooseProcs(setting, cpus int, envSet bool, database string) procsChoice {
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
	}
	return procsChoice{cpus - 1, fmt.Sprintf("CPUs available (%d) less one for PostgreSQL on this host", cpus)}
}

// setProcs applies chooseProcs to this process.
func setProcs(setting int, database string) procsChoice {
	_, envSet := os.LookupEnv("GOMAXPROCS")
	cpus := runtime.GOMAXPROCS(0)
	c := chooseProcs(setting, cpus, envSet, database)
	if c.N != cpus { // setting it, even unchanged, ends Go's own updates to a cgroup limit
		runtime.GOMAXPROCS(c.N)
	}
	return c
}
