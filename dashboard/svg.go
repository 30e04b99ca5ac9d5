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
	every := 24
	switch {
	case n <= 24:
		every = 3
	case n <= 72:
		every = 6
	case n <= 24*4:
		every = 12
	}
	for i := 0; i < n; i += every {
		at := start.Add(time.Duration(i) * step)
		c.Ticks = append(c.Ticks, tick{X: fmtF(float64(i) * bw), Time: isoTime(at), Label: at.UTC().Format("01-02 15:00")})
	}
	for _, s := range order {
		if totals[s] > 0 || s != "unknown" {
			c.Legend = append(c.Legend, legend{Status: s, Class: funcs["statusClass"].(func(string) string)(s), Count: totals[s]})
		}
	}
	return c
}
