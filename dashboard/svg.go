package dashboard

import (
	"strconv"
	"strings"
	"time"
)

// chart is a stacked bar chart rendered as SVG by the templates (so that
// html/template escapes every value): one bar per bucket, one segment per
// status.
type chart struct {
	Width, Height int
	PlotTop       int
	PlotBottom    int
	Bars          []bar
	Ticks         []tick
	Legend        []legend
	Max           int
	Total         int
}

type bar struct {
	X, W     string
	Segments []segment
	Title    string
}

type segment struct {
	Y, H   string
	Class  string
	Status string
	Count  int
}

type tick struct {
	X     string
	Time  string // ISO, app.js shows it in the browser's zone
	Label string
}

type legend struct {
	Status string
	Class  string
	Count  int
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// newChart lays out buckets (counts by status per step from start).
func newChart(start time.Time, step time.Duration, buckets []map[string]int, order []string, label func(time.Time) string) *chart {
	c := &chart{Width: 960, Height: 180, PlotTop: 20, PlotBottom: 150}
	for _, b := range buckets {
		t := 0
		for _, n := range b {
			t += n
		}
		c.Max = max(c.Max, t)
		c.Total += t
	}
	totals := map[string]int{}
	n := len(buckets)
	if n == 0 {
		return c
	}
	bw := float64(c.Width) / float64(n)
	ph := float64(c.PlotBottom - c.PlotTop)
	for i, b := range buckets {
		at := start.Add(time.Duration(i) * step)
		br := bar{X: fmtF(float64(i) * bw), W: fmtF(max(bw-1, 0.5))}
		y := float64(c.PlotBottom)
		var parts []string
		for _, s := range order {
			cnt := b[s]
			if cnt == 0 {
				continue
			}
			totals[s] += cnt
			h := ph * float64(cnt) / float64(max(c.Max, 1))
			y -= h
			br.Segments = append(br.Segments, segment{Y: fmtF(y), H: fmtF(h), Class: funcs["statusClass"].(func(string) string)(s), Status: s, Count: cnt})
			parts = append(parts, strconv.Itoa(cnt)+" "+s)
		}
		if len(parts) == 0 {
			parts = []string{"no reports"}
		}
		br.Title = label(at) + ": " + strings.Join(parts, ", ")
		c.Bars = append(c.Bars, br)
	}
	c.Ticks = ticks(start, step, n, bw)
	for _, s := range order {
		if totals[s] > 0 || s != "unknown" {
			c.Legend = append(c.Legend, legend{Status: s, Class: funcs["statusClass"].(func(string) string)(s), Count: totals[s]})
		}
	}
	return c
}

// minTickGap is the least distance between two axis labels in viewBox
// units: a label ("01-02 15:00", 11 characters of 11 px) is about 70 wide.
const minTickGap = 100

// tickSteps are the label intervals, in buckets, from which ticks picks the
// smallest that keeps labels minTickGap apart: 1, 2, 3, 6 or 12 hours, then
// whole days.
var tickSteps = []int{1, 2, 3, 6, 12, 24, 48, 72, 96, 168, 336, 720}

// ticks labels the buckets that start on a multiple of the step (hours of
// the day in UTC, midnights for days), leaving out a label that would run
// past the right edge.
func ticks(start time.Time, step time.Duration, n int, bw float64) []tick {
	every := tickSteps[len(tickSteps)-1]
	for _, e := range tickSteps {
		if float64(e)*bw >= minTickGap {
			every = e
			break
		}
	}
	var out []tick
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * step)
		// the step counts buckets: align on their count since the epoch
		if int(at.Unix()/int64(step/time.Second))%every != 0 {
			continue
		}
		x := float64(i) * bw
		if x+minTickGap*0.7 > float64(n)*bw {
			break
		}
		out = append(out, tick{X: fmtF(x), Time: isoTime(at), Label: at.UTC().Format("01-02 15:00")})
	}
	return out
}
