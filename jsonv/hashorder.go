package jsonv

import (
	"math/bits"
	"slices"
	"unicode/utf16"
)

// HashOrder returns keys in the iteration order of a Clojure
// PersistentHashMap whose keys are the keywords :k (no namespace) for each
// k in keys (Clojure 1.10/1.11, as bundled with PuppetDB 7.12.1). Keys are
// assumed distinct. For len(keys) <= 8 PuppetDB uses array maps, which keep
// insertion order — HashOrder still returns the hash order; callers decide.
//
// A PersistentHashMap is a hash array mapped trie that consumes the 32-bit
// hasheq five bits at a time starting from the least significant bits
// (mask(hash, shift) = (hash >>> shift) & 0x1f, shift = 0, 5, …, 30). At
// every level, BitmapIndexedNode entries are kept in bit-position order and
// an ArrayNode (used once a node would exceed 16 entries) walks its 32 slots
// in index order, so both node kinds visit children in ascending 5-bit chunk
// order and the seq/iterator/reduce walk is depth first. The iteration order
// is therefore the lexicographic order of the chunk sequence
// (h&31, h>>>5&31, …, h>>>30), independent of insertion order and of whether
// a given node happens to be bitmap-indexed or an array node. Only keys with
// identical full hashes (a HashCollisionNode) keep their insertion order,
// which the stable sort below preserves.
func HashOrder(keys []string) []string {
	return hashOrderBy(keys, cljKeywordHash)
}

// StringKeyHashOrder is HashOrder for a PersistentHashMap whose keys are the
// Java strings themselves rather than keywords. Clojure hashes a String as
// Util.hasheq(s) = Murmur3.hashInt(s.hashCode()), which gives an entirely
// different order from the keyword :s. Observed PuppetDB orders that need
// it (see the tests): the internal field order of the events and reports
// entities (most likely because the query engine's :projections maps are
// keyed by strings) and the objects in a report's resource_events.data
// (most likely JSON decoded without keywordizing).
func StringKeyHashOrder(keys []string) []string {
	return hashOrderBy(keys, cljStringHash)
}

func hashOrderBy(keys []string, hash func(string) int32) []string {
	type entry struct {
		key string
		ord uint32
	}
	es := make([]entry, len(keys))
	for i, k := range keys {
		es[i] = entry{k, trieOrderKey(hash(k))}
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		switch {
		case a.ord < b.ord:
			return -1
		case a.ord > b.ord:
			return 1
		}
		return 0
	})
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.key
	}
	return out
}

// trieOrderKey maps a hash to a uint32 whose natural order is the depth-first
// order of the trie: the 5-bit chunks are reassembled most significant first
// (chunk at shift 0 in the top bits, …, the 2-bit chunk at shift 30 at the
// bottom). The mapping is a bijection, so equal keys mean equal hashes.
func trieOrderKey(h int32) uint32 {
	u := uint32(h)
	var k uint32
	for shift := 0; shift < 30; shift += 5 {
		k = k<<5 | (u>>shift)&0x1f
	}
	// The last level (shift 30) only has the two remaining bits.
	return k<<2 | u>>30
}

// cljKeywordHash returns Clojure's (hash :name) for an unqualified keyword:
// Keyword.hasheq = Symbol.hasheq + 0x9e3779b9, where Symbol.hasheq =
// Util.hashCombine(Murmur3.hashUnencodedChars(name), Util.hash(nil) = 0).
func cljKeywordHash(name string) int32 {
	return int32(uint32(cljSymbolHash(name)) + 0x9e3779b9)
}

// cljSymbolHash returns Clojure's (hash 'name) for an unqualified symbol.
func cljSymbolHash(name string) int32 {
	return clojureHashCombine(murmur3HashUnencodedChars(name), 0)
}

// cljStringHash returns Clojure's (hash s) for a java.lang.String:
// Murmur3.hashInt(s.hashCode()).
func cljStringHash(s string) int32 {
	return murmur3HashInt(javaStringHashCode(s))
}

// javaStringHashCode is java.lang.String.hashCode: s[0]*31^(n-1) + … over
// the UTF-16 code units, in int arithmetic.
func javaStringHashCode(s string) int32 {
	var h uint32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + uint32(c)
	}
	return int32(h)
}

// murmur3HashInt is clojure.lang.Murmur3.hashInt (0 hashes to 0).
func murmur3HashInt(x int32) int32 {
	if x == 0 {
		return 0
	}
	return int32(murmur3Fmix(murmur3MixH1(0, murmur3MixK1(uint32(x))), 4))
}

// clojureHashCombine is clojure.lang.Util.hashCombine (boost style) in Java
// int arithmetic; seed >> 2 is an arithmetic shift.
func clojureHashCombine(seed, hash int32) int32 {
	seed ^= int32(uint32(hash) + 0x9e3779b9 + uint32(seed<<6) + uint32(seed>>2))
	return seed
}

// murmur3HashUnencodedChars is clojure.lang.Murmur3.hashUnencodedChars
// (MurmurHash3_x86_32, seed 0) over the string's UTF-16 code units, two
// units per little-endian block, as Java's String.charAt sees them.
func murmur3HashUnencodedChars(s string) int32 {
	cs := utf16.Encode([]rune(s))
	var h1 uint32
	n := len(cs)
	for i := 1; i < n; i += 2 {
		k1 := uint32(cs[i-1]) | uint32(cs[i])<<16
		h1 = murmur3MixH1(h1, murmur3MixK1(k1))
	}
	if n&1 == 1 {
		h1 ^= murmur3MixK1(uint32(cs[n-1]))
	}
	return int32(murmur3Fmix(h1, uint32(2*n)))
}

func murmur3MixK1(k1 uint32) uint32 {
	k1 *= 0xcc9e2d51
	k1 = bits.RotateLeft32(k1, 15)
	k1 *= 0x1b873593
	return k1
}

func murmur3MixH1(h1, k1 uint32) uint32 {
	h1 ^= k1
	h1 = bits.RotateLeft32(h1, 13)
	return h1*5 + 0xe6546b64
}

func murmur3Fmix(h1, length uint32) uint32 {
	h1 ^= length
	h1 ^= h1 >> 16
	h1 *= 0x85ebca6b
	h1 ^= h1 >> 13
	h1 *= 0xc2b2ae35
	h1 ^= h1 >> 16
	return h1
}
