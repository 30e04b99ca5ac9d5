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
	return configOnThisHost(cfg)
}

// configOnThisHost tells whether every server of a parsed configuration
// (its host and fallbacks) is on this machine.
func configOnThisHost(cfg *pgconn.Config) bool {
	if !localHost(cfg.Host) {
		return false
	}
	for _, f := range cfg.Fallbacks {
		if !localHost(f.Host) {
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
