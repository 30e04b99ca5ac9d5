package puppetreport_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/puppetreport"
)

// checkYAMLPaths parses data both ways: when the fast path accepts it, the
// general path (the YAML library's tree, then its conversion) must accept
// it too and give the same tree, key order, number text and empty
// collections included. wantFast: the fast path must accept it (a report
// as Psych writes it). It reports whether the fast path accepted it.
func checkYAMLPaths(t testing.TB, name string, data []byte, wantFast bool) bool {
	t.Helper()
	fast, ok := puppetreport.ParseYAMLFast(data)
	general, err := puppetreport.ParseYAMLGeneral(data, puppetreport.DefaultYAMLMaxBytes)
	if !ok {
		if wantFast {
			t.Errorf("%s: the fast path gave up on a report as Psych writes it (the general path: %v)", name, err)
		}
		return false
	}
	if err != nil {
		t.Errorf("%s: the fast path accepts what the general path refuses (%v):\n%.2000q", name, err, data)
		return true
	}
	if !reflect.DeepEqual(fast, general) {
		f, g := jsonv.Compact(fast), jsonv.Compact(general)
		i := 0
		for i < len(f) && i < len(g) && f[i] == g[i] {
			i++
		}
		lo := max(0, i-100)
		t.Errorf("%s: the fast path differs at byte %d:\n   fast: ...%s\ngeneral: ...%s\ninput: %.2000q", name, i,
			f[lo:min(len(f), i+80)], g[lo:min(len(g), i+80)], data)
	}
	return true
}

func readMaybeGzip(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return data
}

// TestYAMLFastPathFiles: every YAML report in the repository and the
// shared samples (real Psych output: Puppet 7.23's store and http
// processors, puppet apply, instance variable dumps) takes the fast path
// and gives what the general path gives. REPORTDB_YAML_DIR adds a
// directory of them (*.yaml, *.yaml.gz), as bench/http-processor.sh
// generates.
func TestYAMLFastPathFiles(t *testing.T) {
	var paths []string
	for _, g := range []string{
		"../testdata/puppet7/*/*.yaml",
		"../testdata/shared/clients/samples/puppet-report-yaml/*.yaml",
		filepath.Join(testcorpus.SharedDir(t), "clients", "samples", "puppet-report-yaml", "*.yaml"),
		filepath.Join(puppet723Dir, "*.yaml.gz"),
	} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	if len(paths) < 50 {
		t.Fatalf("only %d YAML reports found", len(paths))
	}
	extra := 0
	if dir := os.Getenv("REPORTDB_YAML_DIR"); dir != "" {
		for _, g := range []string{"*.yaml", "*.yaml.gz"} {
			m, _ := filepath.Glob(filepath.Join(dir, g))
			paths = append(paths, m...)
			extra += len(m)
		}
		if extra == 0 {
			t.Fatalf("REPORTDB_YAML_DIR=%s holds no *.yaml or *.yaml.gz", dir)
		}
	}
	var wg sync.WaitGroup
	next := make(chan string)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for p := range next {
				checkYAMLPaths(t, p, readMaybeGzip(t, p), true)
			}
		})
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	t.Logf("%d reports (%d from REPORTDB_YAML_DIR)", len(paths), extra)
}

// TestYAMLFastPathGenerated: every corpus report written as YAML in the
// ways Psych writes it (Puppet 7's to_data_hash dump and Puppet 3's
// instance variables) and in others the fast path reads (wider indents,
// sequences indented under their keys, scalars folded over lines, every
// string double-quoted and folded with escaped line breaks) takes the fast
// path and gives what the general path gives; the Puppet 7 dumps also
// convert to what their JSON converts to.
func TestYAMLFastPathGenerated(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(corpusDirOf(t), "format10", "*.json*"))
	if len(paths) < 100 {
		t.Fatalf("only %d corpus reports", len(paths))
	}
	variants := []psychOpts{
		{name: "psych", indent: 2, compact: true, width: 80},
		{name: "ivars", indent: 2, compact: true, width: 80, ivars: true},
		{name: "indent4", indent: 4},
		{name: "narrow", indent: 3, compact: false, width: 24},
		{name: "quoted", indent: 2, compact: true, width: 40, quote: true},
		{name: "ivars-narrow", indent: 2, compact: true, width: 30, ivars: true, quote: true},
	}
	docs := 0
	for i, path := range paths {
		doc := readJSON(t, path).(*jsonv.Object)
		want, err := puppetreport.Convert(doc, opts())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, o := range variants {
			o.rng = rand.New(rand.NewSource(int64(i)))
			data := psychYAML(t, doc, o)
			name := filepath.Base(path) + " as " + o.name
			docs++
			if !checkYAMLPaths(t, name, data, true) || o.ivars {
				continue
			}
			ydoc, _ := puppetreport.ParseYAMLFast(data)
			got, err := puppetreport.Convert(ydoc, opts())
			if err != nil {
				t.Errorf("%s: refused: %v", name, err)
				continue
			}
			assertSameJSON(t, name+" converted", got, want)
		}
	}
	t.Logf("%d documents", docs)
}

// psychOpts is how psychYAML writes a report.
type psychOpts struct {
	name    string
	ivars   bool // Puppet 3's dump: tagged objects, symbols, tag sets, timestamps
	indent  int  // spaces a level (Psych: 2)
	compact bool // sequences at their mapping's column (Psych)
	width   int  // fold scalars on lines longer than this (Psych: 80; 0: never)
	quote   bool // double-quote every string; fold them with escaped line breaks too
	rng     *rand.Rand
}

// psychYAML writes report doc as Psych's dump of the report does: with
// the YAML library's emitter (the libyaml emitter Psych uses, ported), the
// string styles Psych's YAMLTree chooses, and its folding of long scalars.
func psychYAML(t testing.TB, doc *jsonv.Object, o psychOpts) []byte {
	t.Helper()
	root := o.object(doc, func(key string, v any) *yaml.Node {
		if !o.ivars {
			return nil
		}
		switch key {
		case "time":
			return o.timestamp(v)
		case "logs":
			return o.seq(v, func(e any) *yaml.Node {
				return o.tagged("Puppet::Util::Log", e, map[string]any{"remote": false}, func(k string, v any) *yaml.Node {
					switch k {
					case "level":
						return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(":", v)}
					case "tags":
						return o.tagSet(v)
					case "time":
						return o.timestamp(v)
					}
					return nil
				})
			})
		case "metrics":
			return o.mapOf(v, func(e any) *yaml.Node { return o.tagged("Puppet::Util::Metric", e, nil, nil) })
		case "resource_statuses":
			return o.mapOf(v, func(e any) *yaml.Node {
				return o.tagged("Puppet::Resource::Status", e, map[string]any{"source_description": "/Stage[main]", "restarted": false},
					func(k string, v any) *yaml.Node {
						switch k {
						case "tags":
							return o.tagSet(v)
						case "time":
							return o.timestamp(v)
						case "events":
							return o.seq(v, func(e any) *yaml.Node {
								return o.tagged("Puppet::Transaction::Event", e, map[string]any{"invalidate_refreshes": true},
									func(k string, v any) *yaml.Node {
										if k == "time" {
											return o.timestamp(v)
										}
										return nil
									})
							})
						}
						return nil
					})
			})
		}
		return nil
	})
	root.Tag, root.Style = "!ruby/object:Puppet::Transaction::Report", yaml.TaggedStyle
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(o.indent)
	if o.compact {
		enc.CompactSeqIndent()
	}
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	text := "--- " + b.String()
	if o.width > 0 {
		text = o.fold(text)
	}
	return []byte(text)
}

// node writes plain data.
func (o psychOpts) node(v any) *yaml.Node {
	switch x := v.(type) {
	case *jsonv.Object:
		return o.object(x, nil)
	case []any:
		return o.seq(x, o.node)
	case string:
		return o.str(x)
	case jsonv.Number:
		if !x.IsInteger() { // a Float, as Ruby writes it
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				panic(err)
			}
			return &yaml.Node{Kind: yaml.ScalarNode, Value: puppetreport.RubyFloatToS(f)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Value: string(x)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(x)}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	panic(fmt.Sprintf("%T", v))
}

// object writes a mapping; special, when it returns a node, writes a
// member's value.
func (o psychOpts) object(obj *jsonv.Object, special func(string, any) *yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i, k := range obj.Keys {
		var v *yaml.Node
		if special != nil {
			v = special(k, obj.Values[i])
		}
		if v == nil {
			v = o.node(obj.Values[i])
		}
		n.Content = append(n.Content, o.str(k), v)
	}
	return n
}

func (o psychOpts) seq(v any, elem func(any) *yaml.Node) *yaml.Node {
	a, ok := v.([]any)
	if !ok {
		return o.node(v)
	}
	n := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range a {
		n.Content = append(n.Content, elem(e))
	}
	return n
}

func (o psychOpts) mapOf(v any, elem func(any) *yaml.Node) *yaml.Node {
	obj, ok := v.(*jsonv.Object)
	if !ok {
		return o.node(v)
	}
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i, k := range obj.Keys {
		n.Content = append(n.Content, o.str(k), elem(obj.Values[i]))
	}
	return n
}

// tagged writes object v as Puppet 3 dumped it: its instance variables
// (extra ones it had, which to_data_hash drops, first), in a random order.
func (o psychOpts) tagged(class string, v any, extra map[string]any, special func(string, any) *yaml.Node) *yaml.Node {
	obj, ok := v.(*jsonv.Object)
	if !ok {
		return o.node(v)
	}
	x := &jsonv.Object{}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range extra {
			if !yield(k) {
				return
			}
		}
	}) {
		x.Keys, x.Values = append(x.Keys, k), append(x.Values, extra[k])
	}
	for _, i := range o.rng.Perm(len(obj.Keys)) {
		x.Keys, x.Values = append(x.Keys, obj.Keys[i]), append(x.Values, obj.Values[i])
	}
	n := o.object(x, special)
	n.Tag, n.Style = "!ruby/object:"+class, yaml.TaggedStyle
	return n
}

// tagSet writes an array of tags as a Puppet::Util::TagSet.
func (o psychOpts) tagSet(v any) *yaml.Node {
	a, ok := v.([]any)
	if !ok {
		return o.node(v)
	}
	h := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range a {
		h.Content = append(h.Content, o.node(e), &yaml.Node{Kind: yaml.ScalarNode, Value: "true"})
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!ruby/object:Puppet::Util::TagSet", Style: yaml.TaggedStyle,
		Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "hash"}, h}}
}

// timestamp writes a report time as Psych writes a Time.
func (o psychOpts) timestamp(v any) *yaml.Node {
	s, ok := v.(string)
	if !ok || len(s) < 20 || s[10] != 'T' {
		return o.node(v)
	}
	i := strings.LastIndexAny(s, "Z+-")
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s[:10] + " " + s[11:i] + " " + s[i:]}
}

// str writes a string in the style Psych's visit_String gives it.
func (o psychOpts) str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
	r, _ := utf8.DecodeRuneInString(s)
	switch v, err := puppetreport.RubyPlainScalar(s); {
	case o.quote:
		n.Style = yaml.DoubleQuotedStyle
	case strings.Contains(strings.TrimSuffix(s, "\n"), "\n"):
		n.Style = yaml.LiteralStyle
	case s == "y" || s == "Y" || s == "n" || s == "N":
		n.Style = yaml.DoubleQuotedStyle
	case s != "" && !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && !strings.Contains(s[1:], `"`):
		n.Style = yaml.DoubleQuotedStyle
	case err != nil || v != any(s):
		// Psych's ScalarScanner would not read it back as this string
		n.Style = yaml.SingleQuotedStyle
	}
	if n.Style != 0 {
		n.Tag = "!!str"
	}
	return n
}

// fold folds the scalars the emitter wrote on lines longer than o.width
// at spaces (and, quoting, inside double-quoted words with an escaped line
// break), the continuation lines indented past the collection around the
// scalar, as libyaml's emitter folds for Psych.
func (o psychOpts) fold(text string) string {
	var out strings.Builder
	block := -1 // in a block scalar: the column of the collection around it
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(line, "\n")
		pos := len(body) - len(strings.TrimLeft(body, " "))
		if block >= 0 {
			if strings.TrimSpace(body) == "" || pos > block {
				out.WriteString(line)
				continue
			}
			block = -1
		}
		col := pos
		for strings.HasPrefix(body[pos:], "- ") {
			col, pos = pos, pos+2
		}
		start := pos
		if end := quotedEnd(body, pos); end > 0 && (strings.HasPrefix(body[end:], ": ") || body[end:] == ":") {
			col, start = pos, min(end+2, len(body))
		} else if end < 0 {
			if i := strings.Index(body[pos:], ": "); i >= 0 {
				col, start = pos, pos+i+2
			} else if strings.HasSuffix(body, ":") {
				col, start = pos, len(body)
			}
		}
		value := body[start:]
		switch {
		case value == "":
		case strings.ContainsRune("|>!&*{[", rune(value[0])):
			if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") || strings.Contains(value, " |") {
				block = col
			}
		case len(body) <= o.width:
		default:
			body = body[:start] + o.foldScalar(value, start, col+2)
		}
		out.WriteString(body)
		if strings.HasSuffix(line, "\n") {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// quotedEnd is where the quoted scalar at pos ends (after its closing
// quote); 0 when none starts there, -1 for a plain one.
func quotedEnd(s string, pos int) int {
	if pos >= len(s) {
		return 0
	}
	switch s[pos] {
	case '\'':
		for i := pos + 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return 0
	case '"':
		for i := pos + 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	return -1
}

// foldScalar folds scalar text v, which starts at column start, past
// o.width, continuation lines indented by indent.
func (o psychOpts) foldScalar(v string, start, indent int) string {
	var b strings.Builder
	col := start
	double := v[0] == '"'
	for i := 0; i < len(v); i++ {
		c := v[i]
		if double && c == '\\' && i+1 < len(v) {
			n := 2 // an escape, kept on one line: \n, \x12, \u1234, \U12345678
			switch v[i+1] {
			case 'x':
				n = 4
			case 'u':
				n = 6
			case 'U':
				n = 10
			}
			n = min(n, len(v)-i)
			b.WriteString(v[i : i+n])
			i += n - 1
			col += n
			continue
		}
		if col > o.width && i > 0 && i+1 < len(v) {
			prev, next := v[i-1], v[i+1]
			switch {
			case c == ' ' && prev != ' ' && next != ' ' && next != '\'' && next != '"':
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
				continue
			case o.quote && double && isWordByte(prev) && isWordByte(c) && o.rng.Intn(4) == 0:
				b.WriteString("\\\n" + strings.Repeat(" ", indent))
				col = indent
			}
		}
		b.WriteByte(c)
		col++
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// fastYAMLSeeds are small documents of each construct the fast path reads.
var fastYAMLSeeds = []string{
	"--- !ruby/object:Puppet::Transaction::Report\nhost: h\n",
	"--- !ruby/object:Puppet::Transaction::Report {}\n",
	"!ruby/object:Puppet::Transaction::Report\nhost: h\nlogs: []\nmetrics: {}\nresource_statuses: {}\n",
	"--- !ruby/object:Puppet::Transaction::Report\nlogs:\n- level: notice\n  message: 'it''s a\n    long one'\n  tags:\n  - notice\n  file:\n  line: 12\n",
	"--- !ruby/object:Puppet::Transaction::Report\nlogs:\n- message: \"tab\\there \\u00e9 \\x41 folded\\\n    on \\\"q\\\"\n\n    next\"\n",
	"--- !ruby/object:Puppet::Transaction::Report\nhost: a plain scalar\n  folded over\n\n  three lines\nx: |-\n  line 1\n\n   indented\ny: >+\n  folded\n  text\n\n  more\n\nz: |2-\n    two\n",
	"--- !ruby/object:Puppet::Transaction::Report\nlogs:\n- !ruby/object:Puppet::Util::Log\n  level: :notice\n  tags: !ruby/object:Puppet::Util::TagSet\n    hash:\n      notice: true\n      file: true\n  time: 2026-11-22 00:41:31.869045672 +00:00\n  remote: false\n",
	"--- !ruby/object:Puppet::Transaction::Report\nmetrics:\n  time: !ruby/object:Puppet::Util::Metric\n    name: time\n    values:\n    - - total\n      - Total\n      - 0.5\n",
	"--- !ruby/object:Puppet::Transaction::Report\nresource_statuses:\n  File[/x]: !ruby/object:Puppet::Resource::Status\n    events:\n    - !ruby/object:Puppet::Transaction::Event\n      desired_value: !binary |-\n        e3NoYTI1Nn1hYg==\n      status: success\n",
	"--- !ruby/object:Puppet::Transaction::Report\na: 0.5\nb: 1_000\nc: 0x1f\nd: 1:30\ne: ~\nf: yes\ng: 2024-01-01\nh: -.5e+3\ni: :sym\nj: 'quoted: yes'\nk: !ruby/sym sym\nl: !!str 12\n",
	"--- !ruby/object:Puppet::Transaction::Report\nresource_statuses:\n  \"File[/x: y]\":\n    events:\n    - status: success\n      desired_value:\n      - - a\n        - b\n      - 'k': v\n        \"k2\": [] \n",
	"--- !ruby/object:Puppet::Transaction::Report\nx:\n    - a\n    -\n    - - b\n      - c\n    - d: e\n      f: g\ny: true\n",
}

// FuzzYAMLFastPath: whatever the input, the fast path never gives an
// answer other than the general path's (go test ./puppetreport -run '^$'
// -fuzz FuzzYAMLFastPath -fuzztime 3m).
func FuzzYAMLFastPath(f *testing.F) {
	for _, s := range fastYAMLSeeds {
		f.Add([]byte(s))
	}
	f.Add(readMaybeGzip(f, filepath.Join(puppet723Dir, "corpus-qa-db01.example.org--02.yaml.gz")))
	limit := puppetreport.MaxYAMLNodes
	f.Fuzz(func(t *testing.T, data []byte) {
		if puppetreport.YAMLNodeBound(data, limit+1) > limit {
			return // refused for its size before either path
		}
		checkYAMLPaths(t, "the input", data, false)
	})
}

// TestYAMLFastPathSeeds: the fuzz seeds take the fast path.
func TestYAMLFastPathSeeds(t *testing.T) {
	for i, s := range fastYAMLSeeds {
		checkYAMLPaths(t, fmt.Sprintf("seed %d", i), []byte(s), true)
	}
}

// TestFastYAMLText: the word-at-a-time check of the characters agrees
// with the character-at-a-time rule at every position of a word.
func TestFastYAMLText(t *testing.T) {
	ref := func(data []byte) bool {
		for len(data) > 0 {
			r, n := utf8.DecodeRune(data)
			switch {
			case r == utf8.RuneError && n == 1, r == '\t', r == '\r', r < 0x20 && r != '\n', r >= 0x7f && r < 0xA0,
				r == 0x2028, r == 0x2029, r == 0xFEFF, r == 0xFFFE, r == 0xFFFF:
				return false
			}
			data = data[n:]
		}
		return true
	}
	base := []byte("abcdefgh ijklmno\npqrstuvw")
	for pos := range base {
		for b := range 256 {
			data := slices.Clone(base)
			data[pos] = byte(b)
			if got, want := puppetreport.FastYAMLText(data), ref(data); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", b, pos, got, want)
			}
		}
		for _, r := range []rune{'é', 0x85, 0xA0, 0x2028, 0xFEFF, 0xFFFD, 0x1F600, 0xD7FF, 0xE000} {
			data := append(slices.Clone(base[:pos]), append(utf8.AppendRune(nil, r), base[pos:]...)...)
			if got, want := puppetreport.FastYAMLText(data), ref(data); got != want {
				t.Fatalf("%U at %d: %v, want %v", r, pos, got, want)
			}
		}
	}
}

// TestYAMLReport: NewYAMLReport's ParseCost and Parse are YAMLParseCost
// and ParseYAMLLimit, at and around every limit.
func TestYAMLReport(t *testing.T) {
	docs := [][]byte{[]byte(fastYAMLSeeds[3]), []byte("- 1\n- 2\n"), tinyItems(40000), tinyItems(4*puppetreport.MaxYAMLNodes + 100),
		readMaybeGzip(t, filepath.Join(puppet723Dir, benchYAML))}
	for i, data := range docs {
		y := puppetreport.NewYAMLReport(data)
		if got, want := y.ParseCost(), puppetreport.YAMLParseCost(data); got != want {
			t.Errorf("doc %d: ParseCost %d, YAMLParseCost %d", i, got, want)
		}
		n := int64(puppetreport.YAMLNodeBound(data, 1<<30))
		for _, maxBytes := range []int64{int64(len(data)) - 1, int64(len(data)), 8 * n, 8*n - 8, 8*n + 8, 8 * 1024, 8*1024 - 8, 64 << 20} {
			got, gerr := y.Parse(maxBytes)
			want, werr := puppetreport.ParseYAMLLimit(data, maxBytes)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
				t.Errorf("doc %d, limit %d: Parse gives %v, ParseYAMLLimit %v", i, maxBytes, gerr, werr)
			}
		}
	}
}

// TestYAMLFastPathMutations: documents a few bytes away from what Psych
// writes (a character inserted, deleted or replaced, a line indented
// more or less) give the same answer both ways whenever the fast path
// takes them: the neighbourhood the fuzzer reaches slowly.
func TestYAMLFastPathMutations(t *testing.T) {
	seeds := []string{}
	for _, s := range fastYAMLSeeds {
		seeds = append(seeds, s)
	}
	small := readMaybeGzip(t, filepath.Join(puppet723Dir, "corpus-qa-db01.example.org--02.yaml.gz"))
	ivars, err := os.ReadFile("../testdata/puppet7/apply/db01-run2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, string(small), string(ivars)[:min(len(ivars), 3000)])
	chars := []string{" ", "\n", ":", "-", "- ", "'", "\"", "\\", "#", "|", ">", "!", "&", "*", "{", "}", "[", "]", ",",
		"?", "a", "0", "~", ".", "é", "  ", ": ", " #", "\\\n", "\n  ", "''", "{}", "[]", "|-\n", "\u2028", "\t", "\r"}
	seed := int64(1)
	if s, err := strconv.ParseInt(os.Getenv("YAMLMUTATIONSEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewSource(seed))
	n := 40000
	if testing.Short() {
		n = 4000
	}
	fast := 0
	for i := range n {
		doc := []byte(seeds[rng.Intn(len(seeds))])
		for range 1 + rng.Intn(3) {
			at := rng.Intn(len(doc) + 1)
			switch rng.Intn(4) {
			case 0: // insert
				doc = slices.Insert(doc, at, []byte(chars[rng.Intn(len(chars))])...)
			case 1: // delete
				doc = slices.Delete(doc, at, min(len(doc), at+1+rng.Intn(3)))
			case 2: // replace
				if at < len(doc) {
					doc = slices.Replace(doc, at, at+1, []byte(chars[rng.Intn(len(chars))])...)
				}
			case 3: // indent the line more or less
				ls := bytes.LastIndexByte(doc[:at], '\n') + 1
				if rng.Intn(2) == 0 {
					doc = slices.Insert(doc, ls, ' ')
				} else if ls < len(doc) && doc[ls] == ' ' {
					doc = slices.Delete(doc, ls, ls+1)
				}
			}
		}
		if checkYAMLPaths(t, fmt.Sprintf("mutation %d", i), doc, false) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d mutated documents took the fast path", fast, n)
}
