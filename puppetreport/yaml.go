package puppetreport

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"reportdb/jsonv"
)

// YAML reports
//
// Puppet's `store` report processor writes, and its `http` report processor
// POSTs (Content-Type application/x-yaml), Report#to_yaml: Psych's dump of
// the report. Since Puppet 4 every report class includes PsychSupport, whose
// encode_with dumps to_data_hash under the class tag, so a Puppet 7 dump is
// exactly the report JSON as YAML with one tag on the root:
//
//	--- !ruby/object:Puppet::Transaction::Report
//	host: yaml01.example.com
//	time: '2026-11-21T23:44:45.567939892+00:00'
//	...
//
// Older dumps (Puppet 3) and objects dumped on their own carry their
// instance variables instead, nested objects tagged !ruby/object:
// Puppet::Resource::Status, Puppet::Transaction::Event, Puppet::Util::Log,
// Puppet::Util::Metric, tag sets as !ruby/object:Puppet::Util::TagSet
// {hash: {tag: true}}, times as YAML timestamps and symbols as :name. Their
// instance variable names are the to_data_hash keys; the ones to_data_hash
// does not write are dropped (yamlClasses), and a tagged object's members
// are put in to_data_hash order.

// MaxYAMLAliases bounds the alias expansions (each use of *anchor, counted
// again every time an enclosing alias is expanded) in one YAML report.
// Puppet's dumps use none; a few hundred is plenty for hand-made YAML and
// stops "billion laughs" documents early.
const MaxYAMLAliases = 256

// maxYAMLAliasNodes bounds the nodes copied through aliases.
const maxYAMLAliasNodes = 100000

// DefaultYAMLMaxBytes is the limit ParseYAML applies: the default
// --max-body-bytes.
const DefaultYAMLMaxBytes = 64 << 20

// MaxYAMLNodes bounds the nodes (keys, values, list items, collections) of
// one YAML report, as counted before parsing (yamlNodeBound). The YAML
// library builds a tree of about 250 bytes a node, so this bounds the
// memory a parse takes (about 150 MB at the limit) whatever the
// document's shape: two-byte list items or deep nesting cost what their
// nodes cost. Real reports count one every 20 bytes or so (an 8 MiB
// Puppet report, the most the http processor's endpoint takes, about
// 400,000).
const MaxYAMLNodes = 600000

// yamlBytesPerNode is what the YAML library's tree costs a node.
const yamlBytesPerNode = 250

// YAMLParseCost estimates, in one pass without parsing, the memory that
// parsing data will take, so that callers can budget it first: what the
// YAML library's path takes. A Psych dump takes the fast path instead, a
// sixth to a tenth of that; a document the fast path gives up on late
// then takes the library's path, whose peak that does not raise: what the
// fast path built is garbage by then.
func YAMLParseCost(data []byte) int64 {
	return int64(yamlNodeBound(data, MaxYAMLNodes+1)) * yamlBytesPerNode
}

// ErrYAMLTooLarge is what a *YAMLError that exceeds a size limit unwraps to
// (errors.Is): the report is refused for its size (413), not its content.
var ErrYAMLTooLarge = errors.New("YAML report too large")

// YAMLError rejects a YAML report: not YAML, not a Puppet report, or using
// a tag or construct that reportdb does not read. Line is the 1-based line
// of the offending node (0 when unknown); Path is a JSON path into the
// report as in ValidationError ("" for the document).
type YAMLError struct {
	Line int
	Path string
	Msg  string
	// TooLarge marks a document refused for a size limit (its bytes with
	// aliases expanded, or its node count) rather than for its content.
	TooLarge bool
}

// Unwrap gives ErrYAMLTooLarge for a TooLarge error.
func (e *YAMLError) Unwrap() error {
	if e.TooLarge {
		return ErrYAMLTooLarge
	}
	return nil
}

func (e *YAMLError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line))
	}
	if e.Path != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Path)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParseYAML reads a Puppet report in YAML (the store and http report
// processors' Report#to_yaml) into the tree Puppet's report JSON
// (Report#to_data_hash) has for the same report, ready for Convert:
//
//   - the root must be a mapping tagged !ruby/object:Puppet::Transaction::Report;
//   - symbols (:notice, !ruby/sym notice) become strings; integers stay
//     integers (jsonv.Number, any size); floats get Ruby's Float#to_s
//     literal; plain scalars are typed as Psych types them (yes/no/on/off,
//     ~, null, 0x1f, 0777, 1_000, 1:30, ...), quoted ones are strings;
//   - YAML timestamps become Time#iso8601(9) strings
//     (2026-11-21T23:44:45.567939892+00:00, Z when written Z);
//   - !binary becomes its base64 text, as Puppet's JSON writes binary strings;
//   - tagged report objects are mapped from instance variables to
//     to_data_hash keys (see yamlClasses), tag sets become arrays.
//
// Any other tag (!ruby/object:Foo, !ruby/hash:..., !ruby/regexp, ...) is an
// error naming it: nothing is ever instantiated. Merge keys, complex keys,
// duplicate keys, .inf/.nan, more than one document, alias cycles, more
// than MaxYAMLAliases alias expansions and nesting deeper than
// jsonv.MaxDepth are rejected. Errors are *YAMLError. The size limits are
// ParseYAMLLimit's with DefaultYAMLMaxBytes.
func ParseYAML(data []byte) (any, error) {
	return ParseYAMLLimit(data, DefaultYAMLMaxBytes)
}

// ParseYAMLLimit is ParseYAML with a limit on the decoded size: maxBytes,
// meant to be the request body limit, bounds the document with its
// aliases written out (the document's bytes plus the text of every node
// an alias repeats), so that aliases cannot make a report larger than a
// body may be. The document's node count is bounded before it is parsed
// (MaxYAMLNodes, or maxBytes/8 when that is smaller), which bounds the
// memory a parse takes whatever its shape. Exceeding either limit is a
// *YAMLError with TooLarge set (errors.Is ErrYAMLTooLarge).
//
// A document as Psych writes it is read by a fast path straight from its
// bytes (yamlfast.go); anything else, or anything the fast path finds
// wrong, by the YAML library, which decides what is wrong with it. Both
// give the same tree.
func ParseYAMLLimit(data []byte, maxBytes int64) (any, error) {
	return parseYAMLNodes(data, maxBytes, func(limit int) int { return yamlNodeBound(data, limit) })
}

// YAMLReport is a YAML report on its way from YAMLParseCost to
// ParseYAMLLimit, its nodes counted once for both: ParseCost is
// YAMLParseCost(data), Parse(maxBytes) ParseYAMLLimit(data, maxBytes).
type YAMLReport struct {
	data  []byte
	nodes int // yamlNodeBound(data, MaxYAMLNodes+1)
}

// NewYAMLReport counts the nodes of data for ParseCost and Parse.
func NewYAMLReport(data []byte) YAMLReport {
	return YAMLReport{data: data, nodes: yamlNodeBound(data, MaxYAMLNodes+1)}
}

// ParseCost is YAMLParseCost of the report.
func (y YAMLReport) ParseCost() int64 { return int64(y.nodes) * yamlBytesPerNode }

// Parse is ParseYAMLLimit of the report.
func (y YAMLReport) Parse(maxBytes int64) (any, error) {
	// the count up to MaxYAMLNodes+1 exceeds a limit up to MaxYAMLNodes
	// exactly when the count up to limit+1 does
	return parseYAMLNodes(y.data, maxBytes, func(int) int { return y.nodes })
}

// parseYAMLNodes is ParseYAMLLimit, nodes(limit) being yamlNodeBound(data,
// limit) or any count that exceeds limit exactly when it does.
func parseYAMLNodes(data []byte, maxBytes int64, nodes func(limit int) int) (any, error) {
	if int64(len(data)) > maxBytes {
		return nil, &YAMLError{TooLarge: true, Msg: fmt.Sprintf("the YAML report is %d bytes; the limit is %d bytes", len(data), maxBytes)}
	}
	if limit := yamlNodeLimit(maxBytes); nodes(limit) > limit {
		return nil, &YAMLError{TooLarge: true, Msg: fmt.Sprintf("the YAML report has more than %d nodes (keys, values, list items), "+
			"the limit for a body limit of %d bytes (a real report has about one every 20 bytes)", limit, maxBytes)}
	}
	if doc, ok := parseYAMLFast(data); ok {
		return doc, nil
	}
	return parseYAMLGeneral(data, maxBytes)
}

// parseYAMLGeneral is ParseYAMLLimit's general path, after the size
// checks: the YAML library's node tree, converted by yamlConv.
func parseYAMLGeneral(data []byte, maxBytes int64) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &YAMLError{Msg: "not a Puppet report: the YAML input is empty"}
		}
		return nil, &YAMLError{Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, &YAMLError{Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	default:
		return nil, &YAMLError{Line: extra.Line, Msg: "more than one YAML document; a report is one document"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &YAMLError{Msg: "not a Puppet report: the YAML input has no document"}
	}
	c := &yamlConv{active: map[*yaml.Node]bool{}, expandBudget: maxBytes - int64(len(data)), maxBytes: maxBytes}
	return c.root(doc.Content[0])
}

func yamlNodeLimit(maxBytes int64) int {
	return int(min(MaxYAMLNodes, max(maxBytes/8, 1024)))
}

// yamlNodeBound counts, without parsing, the indicators that can start a
// node: every flow collection start and separator ([, {, ,), block entry
// (- followed by a space or line break), value (: followed by a space, a
// line break or a flow indicator, or after a quote) and explicit key (?).
// Each introduces at most a collection, a key and a value, and the count
// includes indicators inside scalars, so it can only overcount: about 0.7
// of the real node count for Puppet's dumps (their values are mostly
// mapping entries, one indicator for two nodes), the node count itself
// for hostile shapes such as [1,1,...] or - 1 lines. It stops counting
// past stop.
func yamlNodeBound(data []byte, stop int) int {
	n := 1
	i := 0
	// eight bytes at a time: the indicators among them, then each
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		// candidates: [ and { (0x5b, 0x7b: equal with bit 5 set), , and -
		// (0x2c, 0x2d: equal with bit 0 clear), ? and : (0x3f, 0x3a: equal
		// with bits 0 and 2 clear, as ; and > are, which
		// yamlIndicatorAt then refuses)
		const b5, b0, b02 = 0x2020202020202020, 0x0101010101010101, 0x0505050505050505
		m := bytesEqual(w|b5, '{') | bytesEqual(w&^b0, ',') | bytesEqual(w&^b02, ':')
		for m != 0 {
			j := i + bits.TrailingZeros64(m)/8
			m &= m - 1
			if yamlIndicatorAt(data, j) {
				if n++; n > stop {
					return n
				}
			}
		}
	}
	for ; i < len(data); i++ {
		if yamlIndicatorAt(data, i) {
			if n++; n > stop {
				return n
			}
		}
	}
	return n
}

// bytesEqual has the high bit of each byte of w that equals c set, and
// no other bit.
func bytesEqual(w uint64, c byte) uint64 {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	x := w ^ (0x0101010101010101 * uint64(c))
	return ^((x & lo7) + lo7 | x | lo7)
}

// yamlIndicatorAt reports whether data[i] is an indicator yamlNodeBound
// counts.
func yamlIndicatorAt(data []byte, i int) bool {
	next := byte('\n')
	if i+1 < len(data) {
		next = data[i+1]
	}
	switch data[i] {
	case '[', '{', ',':
		return true
	case '-', '?':
		return yamlSpaceOrBreak(next)
	case ':':
		return yamlSpaceOrBreak(next) || next == ',' || next == '[' || next == ']' || next == '{' || next == '}' ||
			(i > 0 && (data[i-1] == '"' || data[i-1] == '\''))
	}
	return false
}

// yamlSpaceOrBreak: a space, tab or line break, a non-ASCII byte (libyaml
// takes NEL, LS and PS for line breaks).
func yamlSpaceOrBreak(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b >= 0x80
}

// yamlPath is a node's JSON path (as in ValidationError), made into text
// only for an error: building every node's path as a string would cost
// memory quadratic in the nesting depth.
type yamlPath struct {
	parent *yamlPath
	key    string
	idx    int
	kind   byte // '.' member, '[' index, '"' quoted member
}

func (p *yamlPath) member(key string) *yamlPath { return &yamlPath{parent: p, key: key, kind: '.'} }
func (p *yamlPath) index(i int) *yamlPath       { return &yamlPath{parent: p, idx: i, kind: '['} }
func (p *yamlPath) quoted(key string) *yamlPath { return &yamlPath{parent: p, key: key, kind: '"'} }

func (p *yamlPath) String() string {
	if p == nil {
		return ""
	}
	base := p.parent.String()
	switch p.kind {
	case '.':
		return member(base, p.key)
	case '[':
		return index(base, p.idx)
	}
	return quotedMember(base, p.key)
}

// yamlClass describes one of Puppet's report classes as it appears tagged.
type yamlClass struct {
	name string   // Ruby class name
	keys []string // to_data_hash keys, in its order
	drop []string // instance variables to_data_hash does not write
	// omitNil are keys to_data_hash writes only when not nil.
	omitNil []string
	// fill gives what to_data_hash writes for a key whose instance
	// variable is unset: nil for most, false for a predicate, [] for tags
	// (nil.to_a). Keys to_data_hash cannot write then (Ruby raises on
	// nil.iso8601 or nil.map: time, events, logs, ...) stay absent, so
	// that Convert reports them missing.
	fill fillMap
	// nested maps a key to the class of its elements (a sequence of them,
	// or a mapping to them).
	nested map[string]*yamlClass
	// nestedKeys and nestedClasses are nested, for nestedOf.
	nestedKeys    []string
	nestedClasses []*yamlClass
	tagName       string // "!ruby/object:" + name
}

type fillMap map[string]any

// emptyArray in a fillMap stands for a new empty array.
var emptyArray = &struct{ array bool }{true}

func nilFill(keys ...string) fillMap {
	m := fillMap{}
	for _, k := range keys {
		m[k] = nil
	}
	return m
}

func (m fillMap) with(k string, v any) fillMap { m[k] = v; return m }

func (k *yamlClass) tag() string { return k.tagName }

var (
	yamlEvent = &yamlClass{
		name: "Puppet::Transaction::Event",
		keys: []string{"audited", "property", "previous_value", "desired_value", "historical_value",
			"message", "name", "status", "time", "redacted", "corrective_change"},
		drop: []string{"resource", "file", "line", "source_description", "tags", "invalidate_refreshes",
			"default_log_level", "property_instance"},
		fill: nilFill("audited", "property", "previous_value", "desired_value", "historical_value",
			"message", "name", "status", "redacted", "corrective_change"),
	}
	yamlStatus = &yamlClass{
		name: "Puppet::Resource::Status",
		keys: []string{"title", "file", "line", "resource", "resource_type", "provider_used",
			"containment_path", "evaluation_time", "tags", "time", "failed", "failed_to_restart",
			"changed", "out_of_sync", "skipped", "change_count", "out_of_sync_count", "events",
			"corrective_change"},
		drop: []string{"source_description", "default_log_level", "real_resource", "failed_dependencies",
			"restarted", "scheduled", "node", "current_values"},
		fill: nilFill("title", "file", "line", "resource", "resource_type", "provider_used",
			"containment_path", "evaluation_time", "failed", "changed", "out_of_sync", "skipped",
			"change_count", "out_of_sync_count", "corrective_change").
			with("failed_to_restart", false).with("tags", emptyArray),
		nested: map[string]*yamlClass{"events": yamlEvent},
	}
	yamlLog = &yamlClass{
		name: "Puppet::Util::Log",
		keys: []string{"level", "message", "source", "tags", "time", "file", "line"},
		drop: []string{"remote", "pos", "issue_code", "environment", "node", "backtrace"},
		fill: nilFill("message", "source", "file", "line").with("level", "").with("tags", emptyArray),
	}
	yamlMetric = &yamlClass{
		name: "Puppet::Util::Metric",
		keys: []string{"name", "label", "values"},
		drop: []string{"type", "value"},
		fill: nilFill("name", "label", "values"),
	}
	yamlReport = &yamlClass{
		name: "Puppet::Transaction::Report",
		keys: []string{"host", "time", "configuration_version", "transaction_uuid", "report_format",
			"puppet_version", "status", "transaction_completed", "noop", "noop_pending", "environment",
			"logs", "metrics", "resource_statuses", "corrective_change", "master_used", "server_used",
			"catalog_uuid", "code_id", "job_id", "cached_catalog_status"},
		drop:    []string{"external_times", "resources_failed_to_generate", "initial_environment", "kind"},
		omitNil: []string{"master_used", "server_used", "catalog_uuid", "code_id", "job_id", "cached_catalog_status"},
		fill: nilFill("host", "configuration_version", "transaction_uuid", "report_format", "puppet_version",
			"status", "transaction_completed", "noop", "noop_pending", "environment", "corrective_change"),
		nested: map[string]*yamlClass{"logs": yamlLog, "metrics": yamlMetric, "resource_statuses": yamlStatus},
	}
	yamlClasses = []*yamlClass{yamlReport, yamlStatus, yamlEvent, yamlLog, yamlMetric}
)

const (
	tagTagSet = "!ruby/object:Puppet::Util::TagSet"
	tagSet    = "!ruby/object:Set"
)

func normTag(t string) string {
	const ruby = "tag:ruby.yaml.org,2002:"
	if strings.HasPrefix(t, ruby) {
		return "!ruby/" + t[len(ruby):]
	}
	return t
}

func tagged(n *yaml.Node) bool { return n.Style&yaml.TaggedStyle != 0 }

// yamlConv converts one document, counting alias expansions.
type yamlConv struct {
	aliases    int
	aliasNodes int
	inAlias    int
	active     map[*yaml.Node]bool // anchored nodes being converted
	// expandBudget is what the text repeated through aliases may add to
	// the document (maxBytes less the document's size).
	expandBudget, maxBytes int64
}

func (c *yamlConv) fail(n *yaml.Node, path *yamlPath, format string, args ...any) error {
	return &YAMLError{Line: n.Line, Path: path.String(), Msg: fmt.Sprintf(format, args...)}
}

// enter resolves an alias and applies the limits; the caller must call
// leave(n) with the node it was given once done.
func (c *yamlConv) enter(n *yaml.Node, path *yamlPath, depth int) (*yaml.Node, error) {
	if depth > jsonv.MaxDepth {
		return nil, c.fail(n, path, "nesting depth exceeds the maximum allowed (%d)", jsonv.MaxDepth)
	}
	if c.inAlias > 0 {
		if c.aliasNodes++; c.aliasNodes > maxYAMLAliasNodes {
			return nil, c.fail(n, path, "aliases expand to more than %d nodes", maxYAMLAliasNodes)
		}
	}
	t := n
	if n.Kind == yaml.AliasNode {
		if c.aliases++; c.aliases > MaxYAMLAliases {
			return nil, c.fail(n, path, "more than %d alias expansions (refusing a possible alias bomb)", MaxYAMLAliases)
		}
		if n.Alias == nil {
			return nil, c.fail(n, path, "alias *%s has no anchor", n.Value)
		}
		t = n.Alias
		c.inAlias++
	}
	if c.inAlias > 0 {
		// a node's text and one byte for its punctuation, as JSON
		// would at least take
		if c.expandBudget -= int64(len(t.Value)) + 1; c.expandBudget < 0 {
			if n.Kind == yaml.AliasNode {
				c.inAlias--
			}
			return nil, &YAMLError{Line: n.Line, Path: path.String(), TooLarge: true, Msg: fmt.Sprintf(
				"with its aliases expanded the YAML report is more than %d bytes, the limit (aliases repeat their anchor's text)", c.maxBytes)}
		}
	}
	if t.Anchor != "" {
		if c.active[t] {
			if n.Kind == yaml.AliasNode {
				c.inAlias--
			}
			return nil, c.fail(n, path, "alias *%s refers to a node that contains it", t.Anchor)
		}
		c.active[t] = true
	}
	return t, nil
}

func (c *yamlConv) leave(n *yaml.Node) {
	t := n
	if n.Kind == yaml.AliasNode {
		t = n.Alias
		c.inAlias--
	}
	if t != nil && t.Anchor != "" {
		delete(c.active, t)
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		if !tagged(n) && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			if v, err := rubyPlainScalar(n.Value); err == nil && v == nil {
				return "null"
			}
		}
		return "a scalar"
	}
	return "a YAML node"
}

func (c *yamlConv) root(n0 *yaml.Node) (any, error) {
	n, err := c.enter(n0, nil, 0)
	if err != nil {
		return nil, err
	}
	defer c.leave(n0)
	want := yamlReport.tag()
	if n.Kind != yaml.MappingNode {
		return nil, &YAMLError{Msg: fmt.Sprintf("not a Puppet report: the YAML document is %s; a report is a mapping tagged %s (Report#to_yaml)", kindName(n), want)}
	}
	if t := normTag(n.Tag); !tagged(n) || t != want {
		what := "an untagged mapping"
		if tagged(n) {
			what = "a mapping tagged " + t
		}
		return nil, &YAMLError{Msg: fmt.Sprintf("not a Puppet report: the YAML document is %s; a report is a mapping tagged %s (Report#to_yaml)", what, want)}
	}
	o, err := c.object(n, nil, 0, yamlReport, true)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// object converts mapping n of class k (nil: plain data). A tagged object
// loses k.drop and nil k.omitNil members, and has its members in k.keys
// order (others after, in document order); an untagged one keeps all its
// members in document order. Members named in k.nested are converted in
// context.
func (c *yamlConv) object(n *yaml.Node, path *yamlPath, depth int, k *yamlClass, isTagged bool) (*jsonv.Object, error) {
	out := &jsonv.Object{}
	seen, err := c.members(n, path, depth, func(key string, vn *yaml.Node) error {
		p := path.member(key)
		var v any
		var err error
		if sub := k.nestedOf(key); sub != nil {
			v, err = c.collection(vn, p, depth+1, sub)
		} else {
			v, err = c.value(vn, p, depth+1)
		}
		if err != nil {
			return err
		}
		if isTagged && k.omits(key, v) {
			return nil
		}
		out.Keys = append(out.Keys, key)
		out.Values = append(out.Values, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if isTagged {
		k.complete(out, seen.has)
	}
	return out, nil
}

// omits reports whether a tagged object of class k leaves out member key
// of value v: to_data_hash does not write it.
func (k *yamlClass) omits(key string, v any) bool {
	return slices.Contains(k.drop, key) || (v == nil && slices.Contains(k.omitNil, key))
}

// complete adds to out, a tagged object of class k with the keys seen,
// what to_data_hash writes for the members it lacks, and puts its members
// in to_data_hash order.
func (k *yamlClass) complete(out *jsonv.Object, seen func(string) bool) {
	for _, key := range k.keys {
		v, ok := k.fill[key]
		if !ok || seen(key) {
			continue
		}
		if v == emptyArray {
			v = []any{}
		}
		out.Keys = append(out.Keys, key)
		out.Values = append(out.Values, v)
	}
	reorder(out, k.keys)
}

// members calls f for each member of mapping n in document order, with its
// key (a string, checked by c.key) and value node; a malformed mapping or a
// repeated key is an error. It returns the set of keys seen.
func (c *yamlConv) members(n *yaml.Node, path *yamlPath, depth int, f func(key string, value *yaml.Node) error) (yamlKeys, error) {
	var seen yamlKeys
	if len(n.Content)%2 != 0 {
		return seen, c.fail(n, path, "malformed mapping")
	}
	for i := 0; i < len(n.Content); i += 2 {
		key, err := c.key(n.Content[i], path, depth+1)
		if err != nil {
			return seen, err
		}
		if !seen.add(key) {
			return seen, c.fail(n.Content[i], path, "duplicate key %s", jsonv.AppendString(nil, key))
		}
		if err := f(key, n.Content[i+1]); err != nil {
			return seen, err
		}
	}
	return seen, nil
}

func (k *yamlClass) nestedOf(key string) *yamlClass {
	if k == nil {
		return nil
	}
	for i, n := range k.nestedKeys {
		if n == key {
			return k.nestedClasses[i]
		}
	}
	return nil
}

func init() {
	// nested as two short slices, quicker to search than the map
	for _, k := range yamlClasses {
		k.tagName = "!ruby/object:" + k.name
		for _, key := range slices.Sorted(maps.Keys(k.nested)) {
			k.nestedKeys, k.nestedClasses = append(k.nestedKeys, key), append(k.nestedClasses, k.nested[key])
		}
	}
}

// yamlKeys is the set of a mapping's keys: a slice while small.
type yamlKeys struct {
	list []string
	m    map[string]bool
}

func (k *yamlKeys) has(key string) bool {
	if k.m != nil {
		return k.m[key]
	}
	for _, e := range k.list {
		if e == key {
			return true
		}
	}
	return false
}

// add adds key and reports whether it was new.
func (k *yamlKeys) add(key string) bool {
	if k.has(key) {
		return false
	}
	if k.m == nil && len(k.list) >= 16 {
		k.m = make(map[string]bool, 32)
		for _, e := range k.list {
			k.m[e] = true
		}
	}
	if k.m != nil {
		k.m[key] = true
	} else {
		k.list = append(k.list, key)
	}
	return true
}

// reorder puts o's members named in keys first, in that order.
func reorder(o *jsonv.Object, keys []string) {
	ks := make([]string, 0, len(o.Keys))
	vs := make([]any, 0, len(o.Keys))
	used := make([]bool, len(o.Keys))
	for _, k := range keys {
		for i, ok := range o.Keys {
			if ok == k && !used[i] {
				ks, vs, used[i] = append(ks, ok), append(vs, o.Values[i]), true
			}
		}
	}
	for i := range o.Keys {
		if !used[i] {
			ks, vs = append(ks, o.Keys[i]), append(vs, o.Values[i])
		}
	}
	o.Keys, o.Values = ks, vs
}

// collection converts the value of a member holding objects of class k: a
// sequence of them (logs, events) or a mapping to them (metrics,
// resource_statuses). Anything else is converted as plain data (Convert
// then says what is wrong with it).
func (c *yamlConv) collection(n0 *yaml.Node, path *yamlPath, depth int, k *yamlClass) (any, error) {
	n, err := c.enter(n0, path, depth)
	if err != nil {
		return nil, err
	}
	defer c.leave(n0)
	switch {
	case n.Kind == yaml.SequenceNode && plainTag(n, "!!seq"):
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := c.element(e, path.index(i), depth+1, k)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case n.Kind == yaml.MappingNode && plainTag(n, "!!map"):
		out := &jsonv.Object{}
		_, err := c.members(n, path, depth, func(key string, vn *yaml.Node) error {
			v, err := c.element(vn, path.quoted(key), depth+1, k)
			if err != nil {
				return err
			}
			out.Keys = append(out.Keys, key)
			out.Values = append(out.Values, v)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return c.convert(n, path, depth)
}

// element converts one object of class k: a mapping, untagged (a
// to_data_hash) or tagged with k's tag (instance variables).
func (c *yamlConv) element(n0 *yaml.Node, path *yamlPath, depth int, k *yamlClass) (any, error) {
	n, err := c.enter(n0, path, depth)
	if err != nil {
		return nil, err
	}
	defer c.leave(n0)
	if n.Kind == yaml.MappingNode {
		switch t := normTag(n.Tag); {
		case !tagged(n) || t == "!!map":
			return c.object(n, path, depth, k, false)
		case t == k.tag():
			return c.object(n, path, depth, k, true)
		case isClassTag(t):
			return nil, c.fail(n, path, "expected a %s here; got %s", k.name, t)
		}
	}
	return c.convert(n, path, depth)
}

func isClassTag(t string) bool {
	for _, k := range yamlClasses {
		if t == k.tag() {
			return true
		}
	}
	return false
}

// plainTag reports whether n carries no tag or the given standard one.
func plainTag(n *yaml.Node, std string) bool {
	return !tagged(n) || normTag(n.Tag) == std
}

// value converts plain data.
func (c *yamlConv) value(n0 *yaml.Node, path *yamlPath, depth int) (any, error) {
	n, err := c.enter(n0, path, depth)
	if err != nil {
		return nil, err
	}
	defer c.leave(n0)
	return c.convert(n, path, depth)
}

// convert converts plain data, n already resolved and entered.
func (c *yamlConv) convert(n *yaml.Node, path *yamlPath, depth int) (any, error) {
	t := normTag(n.Tag)
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := c.scalar(n, path)
		if err != nil {
			return nil, err
		}
		if yt, ok := v.(yamlTime); ok {
			return yt.iso, nil
		}
		return v, nil
	case yaml.SequenceNode:
		if !plainTag(n, "!!seq") {
			return nil, c.unsupported(n, path, t)
		}
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := c.value(e, path.index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		switch {
		case plainTag(n, "!!map"):
			return c.object(n, path, depth, nil, false)
		case t == tagTagSet || t == tagSet:
			return c.set(n, path, depth)
		case isClassTag(t):
			return nil, c.fail(n, path, "a %s is not expected here", strings.TrimPrefix(t, "!ruby/object:"))
		}
		return nil, c.unsupported(n, path, t)
	}
	return nil, c.fail(n, path, "unexpected YAML node")
}

func (c *yamlConv) unsupported(n *yaml.Node, path *yamlPath, tag string) error {
	return c.fail(n, path, "unsupported YAML tag %s: only Puppet's report classes (Puppet::Transaction::Report, "+
		"Puppet::Resource::Status, Puppet::Transaction::Event, Puppet::Util::Log, Puppet::Util::Metric, "+
		"Puppet::Util::TagSet) and plain YAML data are accepted", tag)
}

// set converts a Ruby Set dump ({hash: {element: true, ...}}) to the array
// of its elements.
func (c *yamlConv) set(n *yaml.Node, path *yamlPath, depth int) (any, error) {
	bad := func(at *yaml.Node) error {
		return c.fail(at, path, "a %s must be {hash: {element: true, ...}}", strings.TrimPrefix(normTag(n.Tag), "!ruby/object:"))
	}
	if len(n.Content) != 2 {
		return nil, bad(n)
	}
	k, err := c.key(n.Content[0], path, depth+1)
	if err != nil {
		return nil, err
	}
	if k != "hash" {
		return nil, bad(n.Content[0])
	}
	h0 := n.Content[1]
	h, err := c.enter(h0, path, depth+1)
	if err != nil {
		return nil, err
	}
	defer c.leave(h0)
	if h.Kind != yaml.MappingNode || !plainTag(h, "!!map") || len(h.Content)%2 != 0 {
		return nil, bad(h)
	}
	out := make([]any, 0, len(h.Content)/2)
	for i := 0; i < len(h.Content); i += 2 {
		e, err := c.value(h.Content[i], path.index(i/2), depth+2)
		if err != nil {
			return nil, err
		}
		switch e.(type) {
		case *jsonv.Object, []any:
			return nil, bad(h.Content[i])
		}
		if v, err := c.value(h.Content[i+1], path.index(i/2), depth+2); err != nil {
			return nil, err
		} else if v != true {
			return nil, bad(h.Content[i+1])
		}
		out = append(out, e)
	}
	return out, nil
}

// key converts a mapping key to the string Ruby's JSON generator writes for
// it (to_s: symbols by name, nil as "").
func (c *yamlConv) key(n0 *yaml.Node, path *yamlPath, depth int) (string, error) {
	n, err := c.enter(n0, path, depth)
	if err != nil {
		return "", err
	}
	defer c.leave(n0)
	if n.Kind != yaml.ScalarNode {
		return "", c.fail(n, path, "mapping keys must be scalars; got %s", kindName(n))
	}
	if (!tagged(n) && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && n.Value == "<<") ||
		(tagged(n) && normTag(n.Tag) == "!!merge") {
		return "", c.fail(n, path, "YAML merge keys (<<) are not supported")
	}
	v, err := c.scalar(n, path)
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case nil:
		return "", nil
	case bool:
		return strconv.FormatBool(x), nil
	case string:
		return x, nil
	case jsonv.Number:
		return string(x), nil
	case yamlTime:
		return x.toS, nil
	}
	return "", c.fail(n, path, "unsupported mapping key")
}

// scalar types a scalar as Psych's ToRuby does: quoted scalars are
// strings, plain ones go through rubyPlainScalar, tagged ones by tag.
func (c *yamlConv) scalar(n *yaml.Node, path *yamlPath) (any, error) {
	if !tagged(n) {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return n.Value, nil
		}
		v, err := rubyPlainScalar(n.Value)
		if err != nil {
			return nil, c.fail(n, path, "%v", err)
		}
		return v, nil
	}
	t := normTag(n.Tag)
	switch {
	case t == "!!str" || t == "!str":
		return n.Value, nil
	case strings.HasPrefix(t, "!ruby/sym"): // !ruby/sym, !ruby/symbol
		if rest := strings.TrimPrefix(strings.TrimPrefix(t, "!ruby/sym"), "bol"); rest == "" || rest[0] == ':' {
			return n.Value, nil
		}
	case t == "!!binary" || t == "!binary":
		return base64.StdEncoding.EncodeToString(rubyUnpackBase64(n.Value)), nil
	case t == "!!int" || t == "!!float" || t == "!float" || t == "!!bool" || t == "!!null" || t == "!!timestamp":
		v, err := rubyPlainScalar(n.Value)
		if err != nil {
			return nil, c.fail(n, path, "%v", err)
		}
		ok := false
		switch x := v.(type) {
		case nil:
			ok = t == "!!null"
		case bool:
			ok = t == "!!bool"
		case yamlTime:
			ok = t == "!!timestamp"
		case jsonv.Number:
			switch t {
			case "!!int":
				ok = x.IsInteger()
			case "!!float", "!float":
				ok = true
				if x.IsInteger() {
					f, _ := new(big.Float).SetString(string(x))
					ff, _ := f.Float64()
					if math.IsInf(ff, 0) {
						return nil, c.fail(n, path, "%s %s is out of range", t, n.Value)
					}
					v = jsonv.Number(RubyFloatToS(ff))
				}
			}
		}
		if !ok {
			return nil, c.fail(n, path, "%s %s is not a valid %s", t, describe(n.Value), strings.TrimLeft(t, "!"))
		}
		return v, nil
	}
	return nil, c.unsupported(n, path, t)
}

// yamlTime is a YAML timestamp: iso is Time#iso8601(9), toS Time#to_s.
type yamlTime struct{ iso, toS string }

// Psych's ScalarScanner patterns (Ruby 3.1, psych 4). Ruby's \s is ASCII
// whitespace including \v, [[:alpha:]] Unicode letters.
const rbSpace = `[ \t\n\v\f\r]`

var (
	rbTime      = regexp.MustCompile(`^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|` + rbSpace + `+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:` + rbSpace + `*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$`)
	rbTimeParts = regexp.MustCompile(`(\d+:\d+:\d+)(?:\.(\d*))?` + rbSpace + `*(Z|[-+]\d+(:\d\d)?)?`)
	rbTZ        = regexp.MustCompile(`^([+\-]?\d{1,2}):?(\d{1,2})?$`)
	rbDate      = regexp.MustCompile(`^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$`)
	rbSexInt    = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$`)
	rbSexFloat  = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}\.[0-9_]*$`)
	rbFloat     = regexp.MustCompile(`^[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?$`)
	rbInteger   = regexp.MustCompile(`^(?:[-+]?0b[0-1_,]+|[-+]?0[0-7_,]+|[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)|[-+]?0x[0-9a-fA-F_,]+)$`)
	rbTrue      = regexp.MustCompile(`(?i)^(yes|true|on)$`)
	rbFalse     = regexp.MustCompile(`(?i)^(no|false|off)$`)
	rbNull      = regexp.MustCompile(`(?i)^null$`)
	rbFloatSep  = regexp.MustCompile(`[,_]|\.([Ee]|$)`)
)

// rubyPlainScalar types an untagged plain scalar as Psych's
// ScalarScanner#tokenize does, returning nil, bool, string, jsonv.Number
// or yamlTime; symbols become their name. Values Ruby has but JSON cannot
// hold (.inf, .nan) and strings Psych itself fails on are errors.
func rubyPlainScalar(s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	if isDecimal(s) { // fast path: the INTEGER branch of a plain decimal
		return jsonv.Number(s), nil
	}
	if isSimpleFloat(s) { // fast path: the FLOAT branch, nothing to remove
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("invalid float %s", s)
		}
		return rubyFloat(s, f)
	}
	if stringish(s) {
		if utf8.RuneCountInString(s) > 5 {
			return s, nil
		}
		switch {
		case !strings.ContainsAny(s[:1], "ytonfYTONF~"):
			return s, nil
		case isASCII(s): // the regexps below, without them
			switch {
			case s == "~" || strings.EqualFold(s, "null"):
				return nil, nil
			case strings.EqualFold(s, "yes") || strings.EqualFold(s, "true") || strings.EqualFold(s, "on"):
				return true, nil
			case strings.EqualFold(s, "no") || strings.EqualFold(s, "false") || strings.EqualFold(s, "off"):
				return false, nil
			}
			return s, nil
		case s == "~" || rbNull.MatchString(s):
			return nil, nil
		case rbTrue.MatchString(s):
			return true, nil
		case rbFalse.MatchString(s):
			return false, nil
		}
		return s, nil
	}
	switch {
	case rbTime.MatchString(s):
		if t, ok := rubyParseTime(s); ok {
			return t, nil
		}
		return s, nil
	case rbDate.MatchString(s):
		var y, m, d int
		fmt.Sscanf(s, "%d-%d-%d", &y, &m, &d)
		if m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m) {
			return fmt.Sprintf("%04d-%02d-%02d", y, m, d), nil // Date#to_s
		}
		return s, nil
	case strings.EqualFold(s, ".inf") || strings.EqualFold(s, "+.inf") || strings.EqualFold(s, "-.inf") || strings.EqualFold(s, ".nan"):
		return nil, fmt.Errorf("%s (infinity or NaN) has no JSON representation", s)
	case len(s) > 1 && s[0] == ':':
		if q := s[1]; (q == '"' || q == '\'') && strings.LastIndexByte(s[2:], q) >= 0 {
			return strings.TrimPrefix(s[2:2+strings.LastIndexByte(s[2:], q)], ":"), nil
		}
		return s[1:], nil
	case rbSexInt.MatchString(s):
		sum := new(big.Int)
		parts := strings.Split(s, ":")
		for e, p := range parts {
			mul := new(big.Int).Exp(big.NewInt(60), big.NewInt(int64(abs(e-2))), nil)
			sum.Add(sum, mul.Mul(mul, rubyToI(p)))
		}
		return jsonv.Number(sum.String()), nil
	case rbSexFloat.MatchString(s):
		sum := 0.0
		parts := strings.Split(s, ":")
		for e, p := range parts {
			sum += rubyToF(p) * math.Pow(60, float64(abs(e-2)))
		}
		return rubyFloat(s, sum)
	case rbFloat.MatchString(s):
		if s == "." || s == "-." || s == "+." {
			return s, nil
		}
		return rubyFloatLiteral(s)
	case rbInteger.MatchString(s):
		t := strings.NewReplacer(",", "", "_", "").Replace(s)
		neg := false
		if t[0] == '-' || t[0] == '+' {
			neg, t = t[0] == '-', t[1:]
		}
		base := 10
		switch {
		case strings.HasPrefix(t, "0b"):
			base, t = 2, t[2:]
		case strings.HasPrefix(t, "0x"):
			base, t = 16, t[2:]
		case len(t) > 1 && t[0] == '0':
			base, t = 8, t[1:]
		}
		n, ok := new(big.Int).SetString(t, base)
		if !ok || t == "" {
			return nil, fmt.Errorf("invalid integer %s", s)
		}
		if neg {
			n.Neg(n)
		}
		return jsonv.Number(n.String()), nil
	}
	return s, nil
}

// rubyFloatLiteral is the FLOAT branch of rubyPlainScalar for s, which
// matches rbFloat.
func rubyFloatLiteral(s string) (any, error) {
	f, err := strconv.ParseFloat(rbFloatSep.ReplaceAllString(s, "$1"), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("invalid float %s", s)
	}
	return rubyFloat(s, f)
}

// isSimpleFloat reports whether s is [-+]?[0-9]+\.[0-9]+([eE][-+][0-9]+)?
// (0.000412, 4.3061e-05): no earlier branch of rubyPlainScalar takes it,
// rbFloat does, and rbFloatSep finds nothing to remove.
func isSimpleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if !digits() || i == len(s) || s[i] != '.' {
		return false
	}
	i++
	if !digits() {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i == len(s) || (s[i] != '-' && s[i] != '+') {
			return false
		}
		i++
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isDecimal reports whether s is 0 or [1-9][0-9]*, which Psych types as
// that Integer.
func isDecimal(s string) bool {
	if s == "0" {
		return true
	}
	if s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stringish is ScalarScanner's first test,
// /^[^\d.:-]?[[:alpha:]_\s!@#$%\^&*(){}<>|\/\\~;=]+/ || /\n/, without a
// regexp: the class must match the first character, or the second after
// any first character but a digit, '.', ':' or '-'.
func stringish(s string) bool {
	if strings.IndexByte(s, '\n') >= 0 {
		return true
	}
	r0, n := utf8.DecodeRuneInString(s)
	if inStringClass(r0) {
		return true
	}
	if n == len(s) || (r0 >= '0' && r0 <= '9') || r0 == '.' || r0 == ':' || r0 == '-' {
		return false
	}
	r1, _ := utf8.DecodeRuneInString(s[n:])
	return inStringClass(r1)
}

func inStringClass(r rune) bool {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			return true
		}
		return strings.IndexRune("_ \t\n\v\f\r!@#$%^&*(){}<>|/\\~;=", r) >= 0
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nl, r)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func rubyFloat(s string, f float64) (any, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("%s is out of the range of a float (no JSON representation)", s)
	}
	return jsonv.Number(RubyFloatToS(f)), nil
}

// rubyToI is String#to_i for the digit groups rbSexInt admits.
func rubyToI(s string) *big.Int {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && b.Len() > 0 {
				continue
			}
			break
		}
		b.WriteByte(s[i])
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	if !ok {
		return new(big.Int)
	}
	if neg {
		n.Neg(n)
	}
	return n
}

// rubyToF is String#to_f for the groups rbSexFloat admits.
func rubyToF(s string) float64 {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_':
			if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
				continue
			}
			i = len(s)
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			b.WriteByte(c)
		default:
			i = len(s)
		}
	}
	t := strings.TrimSuffix(b.String(), ".")
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0
	}
	return f
}

// rubyParseTime is Psych's ScalarScanner#parse_time followed by
// Time#iso8601(9) and Time#to_s; ok is false where Ruby raises
// ArgumentError (the scalar then stays a string). A time without zone is
// local time in Ruby; reportdb takes UTC (+00:00).
func rubyParseTime(s string) (yamlTime, bool) {
	// Ruby splits at the first space, t or T (a tab there makes Psych fail;
	// the scalar then stays a string here).
	i := strings.IndexAny(s, " tT")
	if i < 0 {
		return yamlTime{}, false
	}
	date, rest := s[:i], s[i+1:]
	neg := strings.HasPrefix(date, "-")
	var y, m, d int
	if _, err := fmt.Sscanf(strings.TrimPrefix(date, "-"), "%d-%d-%d", &y, &m, &d); err != nil {
		return yamlTime{}, false
	}
	if neg {
		y = -y
	}
	md := rbTimeParts.FindStringSubmatch(rest)
	if md == nil {
		return yamlTime{}, false
	}
	var hh, mm, ss int
	fmt.Sscanf(md[1], "%d:%d:%d", &hh, &mm, &ss)
	frac := md[2]
	if len(frac) > 9 {
		frac = frac[:9]
	}
	nanos, _ := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
	if m < 1 || m > 12 || d < 1 || d > 31 || hh > 24 || mm > 59 || ss > 60 ||
		(hh == 24 && (mm != 0 || ss != 0 || strings.Trim(md[2], "0") != "")) {
		return yamlTime{}, false
	}
	offset, utc := 0, false
	switch zone := md[3]; zone {
	case "Z":
		utc = true
	case "":
	default:
		tz := rbTZ.FindStringSubmatch(zone)
		if tz == nil {
			return yamlTime{}, false
		}
		h, _ := strconv.Atoi(tz[1])
		offset = h * 3600
		mins, _ := strconv.Atoi(tz[2])
		if offset < 0 {
			offset -= mins * 60
		} else {
			offset += mins * 60
		}
		if offset <= -86400 || offset >= 86400 {
			return yamlTime{}, false
		}
	}
	wall := time.Date(y, time.Month(m), d, hh, mm, ss, nanos, time.UTC)
	zone, zone4 := "Z", "UTC"
	if !utc {
		sign, o := '+', offset
		if o < 0 {
			sign, o = '-', -o
		}
		zone = fmt.Sprintf("%c%02d:%02d", sign, o/3600, o/60%60)
		zone4 = fmt.Sprintf("%c%02d%02d", sign, o/3600, o/60%60)
	}
	yr := fmt.Sprintf("%04d", wall.Year())
	if wall.Year() < 0 {
		yr = fmt.Sprintf("-%04d", -wall.Year())
	}
	clock := fmt.Sprintf("%02d:%02d:%02d", wall.Hour(), wall.Minute(), wall.Second())
	day := fmt.Sprintf("%s-%02d-%02d", yr, int(wall.Month()), wall.Day())
	return yamlTime{
		iso: fmt.Sprintf("%sT%s.%09d%s", day, clock, wall.Nanosecond(), zone),
		toS: day + " " + clock + " " + zone4,
	}, true
}

// rubyUnpackBase64 is String#unpack('m'): characters outside the base64
// alphabet are skipped, decoding stops at '=', an incomplete last group
// yields what it holds.
func rubyUnpackBase64(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' {
			break
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			b = append(b, c)
		}
	}
	if len(b)%4 == 1 {
		b = b[:len(b)-1]
	}
	out, err := base64.RawStdEncoding.DecodeString(string(b))
	if err != nil {
		return nil
	}
	return out
}
