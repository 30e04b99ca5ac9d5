package importer

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Stats is a snapshot of a running import.
type Stats struct {
	FilesDone, FilesTotal int64 // files and archive entries
	Stored, Duplicates    int64
	Rejected, Failed      int64
	// BytesDone of BytesTotal bytes of the input files have been read
	// (for a gzipped file, its compressed position).
	BytesDone, BytesTotal int64
	Elapsed               time.Duration
}

// Reports is the number of reports stored or found already stored.
func (s Stats) Reports() int64 { return s.Stored + s.Duplicates }

// ReportsPerSecond is the average rate since the start.
func (s Stats) ReportsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Reports()) / s.Elapsed.Seconds()
}

// BytesPerSecond is the average rate at which the input is read.
func (s Stats) BytesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.BytesDone) / s.Elapsed.Seconds()
}

// ETA estimates the time left from the average rate of input bytes read
// (or of files, when the sizes are unknown); ok is false before anything
// is done.
func (s Stats) ETA() (time.Duration, bool) {
	if s.BytesTotal > 0 {
		if s.BytesDone == 0 || s.Elapsed <= 0 {
			return 0, false
		}
		left := max(s.BytesTotal-s.BytesDone, 0)
		return time.Duration(float64(s.Elapsed) / float64(s.BytesDone) * float64(left)), true
	}
	if s.FilesDone == 0 || s.Elapsed <= 0 {
		return 0, false
	}
	left := s.FilesTotal - s.FilesDone
	if left < 0 {
		left = 0
	}
	perFile := float64(s.Elapsed) / float64(s.FilesDone)
	return time.Duration(perFile * float64(left)), true
}

// Progress shows a running import.
type Progress interface {
	// Interval is how often Update is called.
	Interval() time.Duration
	Update(Stats)
	// Done is called once at the end, before the summary is written.
	Done(Stats)
}

// LineProgress writes a line every interval:
// "read 950 reports, 1200/10000 files, 12.0/100.0 MB (12%), 950 reports/s, 12.0 MB/s, ETA 7.3s".
type LineProgress struct {
	W     io.Writer
	Every time.Duration
	first bool
}

// NewLineProgress returns a LineProgress writing to w every interval.
func NewLineProgress(w io.Writer, interval time.Duration) *LineProgress {
	return &LineProgress{W: w, Every: interval, first: true}
}

// Interval implements Progress.
func (p *LineProgress) Interval() time.Duration { return p.Every }

// Update implements Progress.
func (p *LineProgress) Update(s Stats) {
	if p.first { // the call at the start: nothing to say yet
		p.first = false
		return
	}
	fmt.Fprintln(p.W, progressLine(s))
}

// Done implements Progress.
func (p *LineProgress) Done(Stats) {}

func progressLine(s Stats) string {
	line := fmt.Sprintf("read %d reports, %d/%d files, %s/%s", s.Reports(), s.FilesDone, s.FilesTotal,
		megabytes(s.BytesDone), megabytes(s.BytesTotal))
	if s.BytesTotal > 0 {
		line += fmt.Sprintf(" (%.0f%%)", 100*float64(min(s.BytesDone, s.BytesTotal))/float64(s.BytesTotal))
	}
	line += fmt.Sprintf(", %.0f reports/s, %s/s", s.ReportsPerSecond(), megabytes(int64(s.BytesPerSecond())))
	if eta, ok := s.ETA(); ok {
		line += ", ETA " + roundDuration(eta).String()
	} else {
		line += ", ETA unknown"
	}
	if s.Rejected > 0 {
		line += fmt.Sprintf(", %d rejected", s.Rejected)
	}
	if s.Failed > 0 {
		line += fmt.Sprintf(", %d failed", s.Failed)
	}
	return line
}

// megabytes renders a byte count in MB (10^6 bytes), one decimal.
func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// BarProgress draws a progress bar on a terminal: input bytes read of the
// total, reports imported and their rate, and the time elapsed and left.
type BarProgress struct {
	bar *progressbar.ProgressBar
	w   io.Writer
}

// NewBarProgress returns a BarProgress drawing on w (a terminal).
func NewBarProgress(w io.Writer) *BarProgress {
	bar := progressbar.NewOptions64(0,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("importing"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetTheme(progressbar.ThemeASCII),
	)
	return &BarProgress{bar: bar, w: w}
}

// Interval implements Progress.
func (p *BarProgress) Interval() time.Duration { return 200 * time.Millisecond }

// Update implements Progress.
func (p *BarProgress) Update(s Stats) {
	if p.bar.GetMax64() != s.BytesTotal {
		p.bar.ChangeMax64(s.BytesTotal)
	}
	desc := fmt.Sprintf("importing, %d reports, %.0f reports/s", s.Reports(), s.ReportsPerSecond())
	if n := s.Rejected + s.Failed; n > 0 {
		desc += fmt.Sprintf(", %d problems", n)
	}
	p.bar.Describe(desc)
	p.bar.Set64(min(s.BytesDone, s.BytesTotal))
}

// Done implements Progress.
func (p *BarProgress) Done(s Stats) {
	p.Update(s)
	if s.FilesDone >= s.FilesTotal && s.BytesDone >= s.BytesTotal {
		p.bar.Finish()
	}
	p.bar.Exit()
	fmt.Fprintln(p.w)
}
