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
		want     int
	}{
		{"embedded", 0, 4, false, "", 4},
		{"local PostgreSQL", 0, 2, false, local, 1},
		{"local PostgreSQL, many CPUs", 0, 16, false, local, 15},
		{"local PostgreSQL, one CPU", 0, 1, false, local, 1},
		{"socket", 0, 4, false, "host=/var/run/postgresql dbname=db", 3},
		{"remote PostgreSQL", 0, 4, false, remote, 4},
		{"GOMAXPROCS set", 0, 2, true, local, 2},
		{"setting", 3, 2, true, local, 3},
		{"setting, embedded", 1, 8, false, "", 1},
	} {
		if got := chooseProcs(c.setting, c.cpus, c.envSet, c.database); got.N != c.want || got.Reason == "" {
			t.Errorf("%s: chooseProcs(%d, %d, %v, %q) = %+v, want %d", c.name, c.setting, c.cpus, c.envSet, c.database, got, c.want)
		}
	}
}
