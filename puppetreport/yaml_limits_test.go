package puppetreport_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb/puppetreport"
)

// memUse runs f and returns the peak heap in use while it ran (sampled)
// and the bytes it allocated in all, both above what was in use before.
func memUse(f func()) (peak, total uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var mu sync.Mutex
	var max uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			mu.Lock()
			if m.HeapInuse > max {
				max = m.HeapInuse
			}
			mu.Unlock()
		}
	}()
	f()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	close(done)
	wg.Wait()
	if after.HeapInuse > max {
		max = after.HeapInuse
	}
	if max > before.HeapInuse {
		peak = max - before.HeapInuse
	}
	return peak, after.TotalAlloc - before.TotalAlloc
}

const reportHeader = "--- !ruby/object:Puppet::Transaction::Report\nhost: h.example.com\ntime: '2026-11-22T00:41:31.868741549+00:00'\n" +
	"configuration_version: 1\ntransaction_uuid: d8b1c74c-ebe3-4393-b849-44e143d4aa5d\nreport_format: 12\npuppet_version: 7.23.0\n" +
	"status: changed\ntransaction_completed: true\nnoop: false\nnoop_pending: false\nenvironment: production\n"

func logEntryYAML(msg string) string {
	return "- level: notice\n  message: " + msg + "\n  source: Puppet\n  tags:\n  - notice\n  time: '2026-11-22T00:41:31.869045672+00:00'\n  file:\n  line:\n"
}

// aliasReport is a report of about msgBytes whose first log message is an
// anchor that uses more log entries repeat.
func aliasReport(msgBytes, uses int) []byte {
	var b strings.Builder
	b.WriteString(reportHeader + "logs:\n")
	b.WriteString(logEntryYAML("&m " + strings.Repeat("x", msgBytes)))
	for i := 0; i < uses; i++ {
		b.WriteString(logEntryYAML("*m"))
	}
	b.WriteString("metrics: {}\nresource_statuses: {}\n")
	return []byte(b.String())
}

// tinyItems is a report of about size bytes whose logs are a list of
// tiny items.
func tinyItems(size int) []byte {
	var b strings.Builder
	b.WriteString(reportHeader + "logs:\n")
	for b.Len() < size {
		b.WriteString("- 1\n")
	}
	return []byte(b.String())
}

// flowItems: the same in flow style, two bytes an item.
func flowItems(size int) []byte {
	var b strings.Builder
	b.WriteString(reportHeader + "logs: [1")
	for b.Len() < size {
		b.WriteString(",1")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// flowMap is a report of about size bytes whose logs are a flow mapping
// of one-letter keys without values: two nodes a separator.
func flowMap(size int) []byte {
	var b strings.Builder
	b.WriteString(reportHeader + "logs: {a")
	for i := 0; b.Len() < size; i++ {
		b.WriteString("," + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)) + string(rune('a'+i/17576%26)))
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// deepNesting is a report of about size bytes of lines of nested flow
// sequences depth deep.
func deepNesting(size, depth int) []byte {
	var b strings.Builder
	b.WriteString(reportHeader + "logs:\n")
	line := "- " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
	for b.Len() < size {
		b.WriteString(line)
	}
	return []byte(b.String())
}

// realScaled is a real Puppet 7.23 report whose logs are repeated to reach
// about size bytes.
func realScaled(t testing.TB, size int) []byte {
	data, err := os.ReadFile(puppet7Dir + "/apply/web01-run1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, "\nlogs:\n")+len("\nlogs:\n"), strings.Index(s, "\nmetrics:\n")+1
	logs := s[i:j]
	var b strings.Builder
	b.WriteString(s[:i])
	for b.Len() < size-len(s) {
		b.WriteString(logs)
	}
	b.WriteString(s[j:])
	return []byte(b.String())
}

// TestParseYAMLExpansionLimit: text repeated through aliases counts
// against the limit; within it aliases are expanded as before.
func TestParseYAMLExpansionLimit(t *testing.T) {
	// a 1 MB message repeated by 250 log entries: 250 MB expanded
	bomb := aliasReport(1<<20, 250)
	_, err := puppetreport.ParseYAML(bomb)
	var ye *puppetreport.YAMLError
	if !errors.As(err, &ye) || !ye.TooLarge || !errors.Is(err, puppetreport.ErrYAMLTooLarge) ||
		!strings.Contains(err.Error(), "more than 67108864 bytes, the limit") {
		t.Fatalf("250 MB of aliases: got %v, want a TooLarge YAMLError naming the limit", err)
	}

	small := aliasReport(1000, 100)
	doc, err := puppetreport.ParseYAML(small)
	if err != nil {
		t.Fatal(err)
	}
	if logs := at(doc, "logs").([]any); len(logs) != 101 || at(doc, "logs", 100, "message") != strings.Repeat("x", 1000) {
		t.Fatalf("%d logs, the last message %.20v", len(logs), at(doc, "logs", 100, "message"))
	}
	for _, c := range []struct {
		limit int64
		ok    bool
	}{
		{int64(len(small)) + 100*1001, true},
		{int64(len(small)) + 100*1001 - 1, false},
		{int64(len(small)), false},
		{int64(len(small)) - 1, false},
	} {
		_, err := puppetreport.ParseYAMLLimit(small, c.limit)
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, puppetreport.ErrYAMLTooLarge)) {
			t.Errorf("limit %d: %v", c.limit, err)
		}
	}
}

// TestParseYAMLMemory: whatever its shape (two-byte list items, flow
// mappings, deep nesting), a YAML report takes memory bounded by its node
// limit, and one past the limit is refused before it is parsed.
func TestParseYAMLMemory(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name     string
		data     []byte
		tooLarge bool
		maxAlloc uint64
	}{
		{"8 MB of tiny list items", tinyItems(8 * mb), true, mb},
		{"8 MB of flow items", flowItems(8 * mb), true, mb},
		{"8 MB nested 500 deep", deepNesting(8*mb, 500), true, mb},
		{"tiny items under the limit", tinyItems(4*puppetreport.MaxYAMLNodes - 1000), false, 400 * mb},
		{"flow mapping under the limit", flowMap(2*puppetreport.MaxYAMLNodes - 1000), false, 400 * mb},
		{"nested 500 deep under the limit", deepNesting(2*puppetreport.MaxYAMLNodes-2000, 500), false, 400 * mb},
		{"a real report of 8 MB", realScaled(t, 8*mb), false, 300 * mb},
		// the fast path reads all of it, gives up at the anchor, and the
		// YAML library's path reads it again
		{"a real report of 8 MB, an anchor at its end", append(realScaled(t, 8*mb), "zz: &a 1\n"...), false, 300 * mb},
	} {
		var err error
		peak, total := memUse(func() { _, err = puppetreport.ParseYAML(c.data) })
		if c.tooLarge != errors.Is(err, puppetreport.ErrYAMLTooLarge) || (!c.tooLarge && err != nil) {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.tooLarge && !strings.Contains(fmt.Sprint(err), fmt.Sprintf("more than %d nodes", puppetreport.MaxYAMLNodes)) {
			t.Errorf("%s: %v, want the node limit named", c.name, err)
		}
		if total > c.maxAlloc {
			t.Errorf("%s (%d bytes): allocated %d MB (peak heap %d MB), want at most %d MB", c.name, len(c.data), total/mb, peak/mb, c.maxAlloc/mb)
		}
	}
}

// TestYAMLMemoryReport prints what parsing hostile and real shapes takes
// (YAMLMEM=1 go test -run TestYAMLMemoryReport -v ./puppetreport).
func TestYAMLMemoryReport(t *testing.T) {
	if os.Getenv("YAMLMEM") == "" {
		t.Skip("set YAMLMEM=1")
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"real 8MB", realScaled(t, 8<<20)},
		{"alias 1MB x250", aliasReport(1<<20, 250)},
		{"tiny items 8MB", tinyItems(8 << 20)},
		{"flow items 8MB", flowItems(8 << 20)},
		{"deep 8MB depth 500", deepNesting(8<<20, 500)},
		{"deep 8MB depth 9000", deepNesting(8<<20, 9000)},
		// the largest documents of each shape under MaxYAMLNodes
		{"tiny items at limit", tinyItems(4*puppetreport.MaxYAMLNodes - 1000)},
		{"flow items at limit", flowItems(2*puppetreport.MaxYAMLNodes - 1000)},
		{"flow map at limit", flowMap(2*puppetreport.MaxYAMLNodes - 1000)},
		{"deep at limit", deepNesting(2*puppetreport.MaxYAMLNodes-2000, 500)},
	} {
		var err error
		start := time.Now()
		peak, total := memUse(func() { _, err = puppetreport.ParseYAML(c.data) })
		t.Logf("%-20s %5.1f MB: peak heap %6.0f MB, allocated %6.0f MB, %v, err %.80v", c.name, float64(len(c.data))/(1<<20),
			float64(peak)/(1<<20), float64(total)/(1<<20), time.Since(start).Round(time.Millisecond), err)
	}
}
