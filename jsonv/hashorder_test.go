package jsonv

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Keyword hashes as computed by Clojure on the JVM; these are the values the
// ClojureScript compiler embeds in `new cljs.core.Keyword(null,"a","a",H)`
// (it emits the JVM (hash kw)), so they are widely published.
func TestKeywordHashKnownValues(t *testing.T) {
	for _, c := range []struct {
		name string
		want int32
	}{
		{"a", -2123407586},
		{"b", 1482224470},
		{"href", -793805698},
		{"target", 253001721},
		{"class", -2030961996},
		{"tabIndex", -169286716},
		{"onClick", -1991238530},
		{"on-click", 1632826543},
		{"warning-as-error", 1347418166},
		{"set-datoms-component", 1418887496},
	} {
		if got := cljKeywordHash(c.name); got != c.want {
			t.Errorf("(hash :%s) = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestStringHash(t *testing.T) {
	// java.lang.String.hashCode.
	for s, want := range map[string]int32{"": 0, "a": 97, "hello": 99162322} {
		if got := javaStringHashCode(s); got != want {
			t.Errorf("%q.hashCode() = %d, want %d", s, got, want)
		}
	}
	// Clojure (hash "a") = Murmur3.hashInt(97).
	if got := cljStringHash("a"); got != 1455541201 {
		t.Errorf("(hash \"a\") = %d, want 1455541201", got)
	}
	if got := cljStringHash(""); got != 0 {
		t.Errorf("(hash \"\") = %d, want 0", got)
	}
}

func TestMurmur3EmptyAndOddLengths(t *testing.T) {
	// (Murmur3/hashUnencodedChars "") is fmix(0, 0) = 0.
	if got := murmur3HashUnencodedChars(""); got != 0 {
		t.Errorf("hashUnencodedChars(\"\") = %d, want 0", got)
	}
	// Non-BMP characters are two UTF-16 code units, so "𝄞" hashes like the
	// two-char string of its surrogates, not like a single char.
	if murmur3HashUnencodedChars("\U0001D11E") == murmur3HashUnencodedChars("\uFFFD") {
		t.Error("surrogate pair hashed as a single char")
	}
}

func TestTrieOrderKeyChunks(t *testing.T) {
	// Lowest 5 bits decide first, so hash 1 sorts after hash 32 (chunk 0 at
	// level 0) and hash -1 (all chunks 31) sorts last.
	if !(trieOrderKey(32) < trieOrderKey(1)) {
		t.Error("hash 32 should precede hash 1")
	}
	if trieOrderKey(-1) != ^uint32(0) || trieOrderKey(0) != 0 {
		t.Error("extremes misplaced")
	}
	// Level 6 (shift 30) holds the top two bits and comes last.
	if !(trieOrderKey(0x40000000) < trieOrderKey(0x20000000)) {
		t.Error("bit 29 (level 5) should dominate bit 30 (level 6)")
	}
}

func splitKeys(s string) []string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// Orders observed on a live PuppetDB 7.12.1. The first three are maps with
// keyword keys (JDBC result rows); the last three are maps with string keys
// (query-engine :projections, non-keywordized decoded JSON), which is why
// they need StringKeyHashOrder.
var hashOrderGroundTruth = []struct {
	name      string
	stringKey bool
	want      string
}{
	{"event rows", false, "new_value, report, corrective_change, run_start_time, property, name, file, old_value, containing_class, line, resource_type, status, configuration_version, resource_title, environment, timestamp, run_end_time, report_receive_time, containment_path, certname, message"},
	{"report rows", false, "catalog_uuid, receive_time, producer, hash, transaction_uuid, puppet_version, noop, corrective_change, logs, report_format, start_time, producer_timestamp, type, cached_catalog_status, end_time, resource_events, status, configuration_version, environment, code_id, noop_pending, certname, metrics, job_id"},
	{"event extract", false, "new_value, report, property, name, file, line, status, timestamp, certname, message"},
	{"report resource_events.data entry", true, "message, old_value, corrective_change, containment_path, timestamp, name, new_value, resource_title, status, property, resource_type, line, containing_class, file"},
	{"events entity fields", true, "message, old_value, report_receive_time, corrective_change, containment_path, certname, timestamp, run_end_time, name, configuration_version, new_value, resource_title, status, property, resource_type, line, environment, containing_class, run_start_time, latest_report?, file, report"},
	{"reports entity fields", true, "receive_time, corrective_change, code_id, noop, certname, puppet_version, hash, cached_catalog_status, transaction_uuid, configuration_version, status, job_id, producer, catalog_uuid, logs, noop_pending, end_time, type, environment, latest_report?, start_time, resource_events, metrics, producer_timestamp, report_format"},
}

func TestHashOrderPuppetDB(t *testing.T) {
	for _, c := range hashOrderGroundTruth {
		t.Run(c.name, func(t *testing.T) {
			order, other := HashOrder, StringKeyHashOrder
			if c.stringKey {
				order, other = other, order
			}
			want := splitKeys(c.want)
			inputs := map[string][]string{}
			sorted := slices.Clone(want)
			slices.Sort(sorted)
			inputs["sorted"] = sorted
			rev := slices.Clone(sorted)
			slices.Reverse(rev)
			inputs["reverse-sorted"] = rev
			rot := append(slices.Clone(want[len(want)/2:]), want[:len(want)/2]...)
			inputs["rotated"] = rot
			for in, keys := range inputs {
				orig := slices.Clone(keys)
				got := order(keys)
				if !slices.Equal(got, want) {
					t.Errorf("%s input:\n got  %s\n want %s", in,
						strings.Join(got, ", "), strings.Join(want, ", "))
				}
				if !slices.Equal(keys, orig) {
					t.Errorf("%s input was modified", in)
				}
			}
			// The key type matters: the other hash gives another order.
			if slices.Equal(other(sorted), want) {
				t.Errorf("both keyword and string hashing give the observed order")
			}
		})
	}
}

func TestHashOrderSmall(t *testing.T) {
	if got := HashOrder(nil); len(got) != 0 {
		t.Errorf("HashOrder(nil) = %v", got)
	}
	if got := HashOrder([]string{"x"}); !slices.Equal(got, []string{"x"}) {
		t.Errorf("HashOrder([x]) = %v", got)
	}
}

// refHAMT is an independent, literal model of clojure.lang.PersistentHashMap's
// trie (BitmapIndexedNode entries kept in bit-position order, promotion to a
// 32-slot ArrayNode when a bitmap node with 16 entries gains another,
// HashCollisionNode appending on full-hash collisions) used to check that
// sorting by trieOrderKey reproduces its depth-first seq order.
type refNode struct {
	array    bool         // ArrayNode (slots indexed by chunk) vs BitmapIndexedNode
	bitmap   uint32       // BitmapIndexedNode only
	entries  []refEntry   // BitmapIndexedNode: in bit-position order
	slots    [32]*refNode // ArrayNode
	collided []string     // HashCollisionNode keys, insertion order
	collHash uint32
}

type refEntry struct {
	key  string // "" with sub != nil for a child node
	hash uint32
	sub  *refNode
}

func refAssoc(n *refNode, shift uint, h uint32, key string) *refNode {
	if n == nil {
		n = &refNode{}
	}
	if n.collided != nil {
		if h == n.collHash {
			n.collided = append(n.collided, key)
			return n
		}
		// Nest the collision node in a bitmap node, as Clojure does.
		wrap := &refNode{bitmap: 1 << ((n.collHash >> shift) & 31),
			entries: []refEntry{{sub: n, hash: n.collHash}}}
		return refAssoc(wrap, shift, h, key)
	}
	idx := (h >> shift) & 31
	if n.array {
		n.slots[idx] = refAssoc(n.slots[idx], shift+5, h, key)
		return n
	}
	bit := uint32(1) << idx
	pos := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit != 0 {
		e := &n.entries[pos]
		if e.sub != nil {
			e.sub = refAssoc(e.sub, shift+5, h, key)
			return n
		}
		var sub *refNode
		if e.hash == h {
			sub = &refNode{collided: []string{e.key, key}, collHash: h}
		} else {
			sub = refAssoc(refAssoc(nil, shift+5, e.hash, e.key), shift+5, h, key)
		}
		*e = refEntry{sub: sub, hash: h}
		return n
	}
	if len(n.entries) >= 16 {
		an := &refNode{array: true}
		an.slots[idx] = refAssoc(nil, shift+5, h, key)
		for _, e := range n.entries {
			j := (e.hash >> shift) & 31
			if e.sub != nil {
				an.slots[j] = e.sub
			} else {
				an.slots[j] = refAssoc(nil, shift+5, e.hash, e.key)
			}
		}
		return an
	}
	n.bitmap |= bit
	n.entries = slices.Insert(n.entries, pos, refEntry{key: key, hash: h})
	return n
}

func refSeq(n *refNode, out []string) []string {
	switch {
	case n == nil:
	case n.collided != nil:
		out = append(out, n.collided...)
	case n.array:
		for _, c := range n.slots {
			out = refSeq(c, out)
		}
	default:
		for _, e := range n.entries {
			if e.sub != nil {
				out = refSeq(e.sub, out)
			} else {
				out = append(out, e.key)
			}
		}
	}
	return out
}

func refOrder(keys []string, hash func(string) int32) []string {
	var root *refNode
	for _, k := range keys {
		root = refAssoc(root, 0, uint32(hash(k)), k)
	}
	return refSeq(root, nil)
}

func TestHashOrderMatchesReferenceTrie(t *testing.T) {
	// Synthetic hashes that share long low-bit prefixes, collide fully, and
	// fill more than 16 slots of one level (ArrayNode promotion).
	hs := map[string]int32{}
	var keys []string
	add := func(k string, h uint32) {
		hs[k] = int32(h)
		keys = append(keys, k)
	}
	for i := range 20 {
		add(fmt.Sprintf("top%d", i), uint32(31-i))
	}
	for i := range 20 {
		add(fmt.Sprintf("deep%d", i), uint32(7|(i+3)<<25))
	}
	add("c1", 0xdeadbeef)
	add("c2", 0xdeadbeef)
	add("c0", 0x5eadbeef)
	add("c3", 0xdeadbeef)
	add("hi", 0xc0000007)
	hash := func(k string) int32 { return hs[k] }
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		want := refOrder(keys, hash)
		if got := hashOrderBy(keys, hash); !slices.Equal(got, want) {
			t.Fatalf("input %q:\n got  %q\n want %q", keys, got, want)
		}
	}
	for _, c := range hashOrderGroundTruth {
		keys := splitKeys(c.want)
		slices.Sort(keys)
		for _, h := range []func(string) int32{cljKeywordHash, cljStringHash} {
			if got, want := hashOrderBy(keys, h), refOrder(keys, h); !slices.Equal(got, want) {
				t.Errorf("%s: got %q, reference %q", c.name, got, want)
			}
		}
	}
}

func FuzzHashOrderPermutation(f *testing.F) {
	for _, c := range hashOrderGroundTruth {
		f.Add(strings.ReplaceAll(c.want, ", ", "\n"))
	}
	f.Add("a\nb\nhref\n\U0001D11E\n")
	f.Fuzz(func(t *testing.T, s string) {
		// Distinct keys, as HashOrder assumes.
		var keys []string
		seen := map[string]bool{}
		for _, k := range strings.Split(s, "\n") {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		for _, hash := range []func(string) int32{cljKeywordHash, cljStringHash} {
			orig := slices.Clone(keys)
			got := hashOrderBy(keys, hash)
			if !slices.Equal(keys, orig) {
				t.Fatal("input modified")
			}
			a, b := slices.Clone(keys), slices.Clone(got)
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				t.Fatalf("not a permutation: %q -> %q", keys, got)
			}
			if want := refOrder(keys, hash); !slices.Equal(got, want) {
				t.Fatalf("%q: got %q, reference trie %q", keys, got, want)
			}
		}
		if got, want := HashOrder(keys), hashOrderBy(keys, cljKeywordHash); !slices.Equal(got, want) {
			t.Fatal("HashOrder does not use keyword hashes")
		}
		if got, want := StringKeyHashOrder(keys), hashOrderBy(keys, cljStringHash); !slices.Equal(got, want) {
			t.Fatal("StringKeyHashOrder does not use string hashes")
		}
	})
}
