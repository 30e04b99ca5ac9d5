package main

import "testing"

func TestChooseProcs(t *testing.T) {
	const local, remote = "postgres://postgres@127.0.0.1:5432/db", "postgres://postgres@db.example.com/db"
	for _, c := range []struct {
		name     string
		setting  int
		cpus     int
		envSet   bool
		database string
		spool    bool
		want     int
	}{
		{"embedded", 0, 4, false, "", false, 4},
		{"local PostgreSQL", 0, 2, false, local, false, 1},
		{"local PostgreSQL, many CPUs", 0, 16, false, local, false, 15},
		{"local PostgreSQL, one CPU", 0, 1, false, local, false, 1},
		{"socket", 0, 4, false, "host=/var/run/postgresql dbname=db", false, 3},
		{"remote PostgreSQL", 0, 4, false, remote, false, 4},
		{"GOMAXPROCS set", 0, 2, true, local, false, 2},
		{"setting", 3, 2, true, local, false, 3},
		{"setting, embedded", 1, 8, false, "", false, 1},
		{"local PostgreSQL, acknowledge spool", 0, 2, false, local, true, 2},
		{"local PostgreSQL, one CPU, acknowledge spool", 0, 1, false, local, true, 1},
		{"acknowledge spool, setting", 1, 2, false, local, true, 1},
		{"acknowledge spool, GOMAXPROCS set", 0, 1, true, local, true, 1},
	} {
		if got := chooseProcs(c.setting, c.cpus, c.envSet, c.database, c.spool); got.N != c.want || got.Reason == "" {
			t.Errorf("%s: chooseProcs(%d, %d, %v, %q, %v) = %+v, want %d", c.name, c.setting, c.cpus, c.envSet, c.database, c.spool, got, c.want)
		}
	}
}
