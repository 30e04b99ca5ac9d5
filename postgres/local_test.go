package postgres

import "testing"

func TestOnThisHost(t *testing.T) {
	t.Setenv("PGHOST", "")
	t.Setenv("PGSERVICEFILE", "")
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"postgres://postgres@127.0.0.1:5432/db", true},
		{"postgres://postgres@localhost/db", true},
		{"postgres://postgres@[::1]:5432/db", true},
		{"postgres://postgres@127.0.0.2/db", true},
		{"postgres:///db?host=/var/run/postgresql", true},
		{"host=/tmp dbname=db", true},
		{"host=127.0.0.1 port=5432 dbname=db", true},
		{"postgres://postgres@db.example.com/db", false},
		{"postgres://postgres@10.0.0.5/db", false},
		{"host=db.example.com dbname=db", false},
		// a fallback elsewhere: the server may be either
		{"postgres://postgres@127.0.0.1,db.example.com/db", false},
		{"postgres://postgres@127.0.0.1,localhost/db", true},
		{"postgres://%zz", false},
	} {
		if got := OnThisHost(c.url); got != c.want {
			t.Errorf("OnThisHost(%q) = %v, want %v", c.url, got, c.want)
		}
	}
	t.Setenv("PGHOST", "db.example.com")
	if OnThisHost("dbname=db") {
		t.Errorf("PGHOST=db.example.com: a string without host is on this host")
	}
}
