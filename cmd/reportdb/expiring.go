package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"reportdb/engine"
	"reportdb/internal/config"
	"reportdb/store"
)

// countExpired counts the stored reports whose producer_timestamp is older
// than cutoff (Unix ms): those retention deletes at its next run. Both
// stores index reports by producer_timestamp, so this reads the index
// range of the expired reports only.
func countExpired(ctx context.Context, b engine.Backend, cutoff int64) (int64, error) {
	return countRows(ctx, b, store.Statement{
		SQL:  "SELECT count(*) FROM reports WHERE producer_timestamp < " + b.Dialect().Placeholder(1),
		Args: []any{cutoff}, ValueSensitive: true})
}

// countRows runs st, a SELECT count(*), and returns the count.
func countRows(ctx context.Context, b engine.Backend, st store.Statement) (int64, error) {
	rows, err := b.Query(ctx, st)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n any
	if rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	c, _ := n.(int64)
	return c, nil
}

// warnExpired warns, at start-up, about the stored reports that the
// first retention run will delete: reports imported from before the
// retention window otherwise vanish an interval after the start with
// nothing but an INFO line. A store that cannot answer now (PostgreSQL
// down) is not counted.
func warnExpired(ctx context.Context, b engine.Backend, cfg *serveConfig, now time.Time, log *slog.Logger) {
	if cfg.ReportTTL <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cutoff := now.Add(-cfg.ReportTTL)
	n, err := countExpired(ctx, b, cutoff.UnixMilli())
	if err != nil {
		log.Debug("counting the reports older than the retention window", "err", err)
		return
	}
	if n == 0 {
		return
	}
	log.Warn(fmt.Sprintf("%d stored reports are older than the retention window (--report-ttl %s): the first retention run deletes them, at %s (--gc-interval %s after start); start with --report-ttl 0 (or longer) to keep them",
		n, config.FormatDuration(cfg.ReportTTL), now.Add(cfg.GCInterval).UTC().Format(time.RFC3339), config.FormatDuration(cfg.GCInterval)),
		"reports", n, "cutoff", cutoff.UTC().Format(time.RFC3339))
}

// warnExpiringNodes warns, at start-up, about the active nodes that the
// first node expiry will mark expired (no report for --node-ttl): imported
// reports with old dates otherwise leave /nodes and the dashboard an
// interval after the start, which looks like data loss.
func warnExpiringNodes(ctx context.Context, b engine.Backend, cfg *serveConfig, now time.Time, log *slog.Logger) {
	if cfg.NodeTTL <= 0 || cfg.Upstream != "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	horizon := now.Add(-cfg.NodeTTL)
	n, err := countRows(ctx, b, store.Statement{
		SQL: "SELECT count(*) FROM certnames WHERE deactivated IS NULL AND expired IS NULL" +
			" AND (latest_report_timestamp IS NULL OR latest_report_timestamp < " + b.Dialect().Placeholder(1) + ")",
		Args: []any{horizon.UnixMilli()}})
	if err != nil {
		log.Debug("counting the nodes node-ttl expires", "err", err)
		return
	}
	if n == 0 {
		return
	}
	log.Warn(fmt.Sprintf("%d nodes have no report newer than --node-ttl %s: the first node expiry marks them expired, at %s (--gc-interval %s after start), and they leave /nodes, the dashboard and the fleet metrics until they report again; start with --node-ttl 0 (or longer) to keep them active",
		n, config.FormatDuration(cfg.NodeTTL), now.Add(cfg.GCInterval).UTC().Format(time.RFC3339), config.FormatDuration(cfg.GCInterval)),
		"nodes", n, "horizon", horizon.UTC().Format(time.RFC3339))
}
