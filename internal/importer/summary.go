package importer

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"reportdb/internal/config"
)

// Destination says where the reports went, for the wording of the summary.
type Destination int

const (
	// ToDatabase: stored directly (duplicates are known).
	ToDatabase Destination = iota
	// ToServer: sent to a server, which does not say what was a duplicate.
	ToServer
	// DryRun: validated only.
	DryRun
)

// ReportsPerSecond is the average rate of reports stored or found stored.
func (s *Summary) ReportsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Reports()) / s.Elapsed.Seconds()
}

// Write prints the summary:
//
//	read 149 reports from 150 files in 2.1s (71 reports/s): 149 stored, 0 already stored
//	  stored:      149
//	  duplicates:  0
//	  rejected:    1
//	  failed:      0
//	  skipped archive entries: 3 catalogs, 3 facts
//	  older than the retention window: 20 (their producer_timestamp is ...)
//	rejected (1):
//	  path/to/file.json: reason
//
// The headline says what happened to the reports: an import of files
// already stored stores nothing, and must not read as if it had.
func (s *Summary) Write(w io.Writer, dest Destination) {
	verb, outcome := "read", fmt.Sprintf(": %d stored, %d already stored", s.Stored, s.Duplicates)
	switch dest {
	case ToServer:
		verb, outcome = "sent", ""
	case DryRun:
		verb, outcome = "validated", ""
	}
	files := plural(s.Files, "file")
	if s.Files != s.FilesTotal {
		files = fmt.Sprintf("%d of %s", s.Files, plural(s.FilesTotal, "file"))
	}
	fmt.Fprintf(w, "%s %s from %s in %s (%.0f reports/s)%s\n", verb, plural(s.Reports(), "report"), files,
		s.Elapsed.Round(time.Millisecond), s.ReportsPerSecond(), outcome)
	switch dest {
	case ToDatabase:
		fmt.Fprintf(w, "  stored:      %d\n", s.Stored)
		fmt.Fprintf(w, "  duplicates:  %d\n", s.Duplicates)
	case ToServer:
		fmt.Fprintf(w, "  accepted:    %d (the server does not say which were duplicates)\n", s.Stored)
	case DryRun:
		fmt.Fprintf(w, "  valid:       %d (dry run: nothing stored)\n", s.Stored)
	}
	fmt.Fprintf(w, "  rejected:    %d\n", s.Rejected)
	fmt.Fprintf(w, "  failed:      %d\n", s.Failed)
	if len(s.Skipped) > 0 {
		kinds := make([]string, 0, len(s.Skipped))
		for k := range s.Skipped {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%d %s", s.Skipped[k], k)
		}
		fmt.Fprintf(w, "  skipped archive entries: %s\n", strings.Join(parts, ", "))
	}
	if s.Expiring > 0 {
		// the reports a server's retention deletes an interval after it
		// starts, which nothing else in the server says at the time
		fmt.Fprintf(w, "  older than the retention window: %d (their producer_timestamp is more than %s old: a server with --report-ttl %s deletes them at its next retention run; run it with --report-ttl 0, or longer, to keep them)\n",
			s.Expiring, config.FormatDuration(s.ReportTTL), config.FormatDuration(s.ReportTTL))
	}
	writeProblems(w, "rejected", s.Rejected, s.RejectedFor)
	writeProblems(w, "failed", s.Failed, s.FailedFor)
	if s.Interrupted {
		fmt.Fprintf(w, "interrupted: %d of %d files processed\n", s.Files, s.FilesTotal)
	}
}

func writeProblems(w io.Writer, what string, total int64, listed []Problem) {
	if total == 0 {
		return
	}
	fmt.Fprintf(w, "%s (%d):\n", what, total)
	for _, p := range listed {
		fmt.Fprintf(w, "  %s: %s\n", p.Name, oneLine(p.Reason))
	}
	if more := total - int64(len(listed)); more > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", more)
	}
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// oneLine keeps a reason on one line of the summary.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.ReplaceAll(s, "\n", " ")
}
