package postgres

import (
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// OnThisHost tells whether every server the connection string names (its
// host and fallbacks, after PostgreSQL's environment variables and
// defaults, as Open reads them) is on this machine: a Unix socket, a
// loopback address or localhost. A string that does not parse is not.
func OnThisHost(url string) bool {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return false
	}
	hosts := []string{cfg.Host}
	for _, f := range cfg.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if !localHost(h) {
			return false
		}
	}
	return true
}

func localHost(h string) bool {
	if h == "" || strings.HasPrefix(h, "/") || strings.EqualFold(h, "localhost") {
		return true // "" and /dir: a Unix socket
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
