package puppetreport

import (
	"bytes"
	"math"
	"math/rand"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func yamlTreeNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += yamlTreeNodes(k)
	}
	return c
}

// FuzzYAMLNodeBound: yamlNodeBound never undercounts by more than its
// documented factor: every node the YAML library builds is introduced by a
// counted indicator (three nodes at most for each) or is the document's
// root.
func FuzzYAMLNodeBound(f *testing.F) {
	for _, s := range []string{
		"a: b\nc: [1, 2, {d: e}]\n", "- - - 1\n", "{a, b, c}", "[a: 1, b: 2]", "? a\n? b\n: c\n",
		"[? a, ? b]", `{"a":1,"b":2}`, "- |\n  text: [1,2]\n- 'x, [1]'\n", "a:\n  - b\n  -\n  - c:\n",
		"--- !ruby/object:Puppet::Transaction::Report\nlogs:\n- &a x\n- *a\n", "[a\n'x, [1,1], y']", "-\u2028-\u2028-", "a:\u2028b:\u2028",
		"a: 1\rb: 2\r", "&a [*a]", "!!map {? [a]: b}", "[,]", "[a,]", "{a: [b, {c: d}], e: f}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes := 0
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for i := 0; i < 100; i++ {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			nodes += yamlTreeNodes(&doc)
		}
		if bound := yamlNodeBound(data, math.MaxInt); nodes > 3*bound+1 {
			t.Fatalf("%q: %d nodes, bound %d", data, nodes, bound)
		}
	})
}

// TestYAMLNodeBoundWords: the word-at-a-time count is the byte-at-a-time
// one, whatever the indicators' positions in a word and at the ends.
func TestYAMLNodeBoundWords(t *testing.T) {
	ref := func(data []byte, stop int) int {
		n := 1
		for i := range data {
			if yamlIndicatorAt(data, i) {
				if n++; n > stop {
					break
				}
			}
		}
		return n
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("[{,-?:]}\"' \n\tx\xc2\x85")
	for range 20000 {
		data := make([]byte, rng.Intn(40))
		for i := range data {
			data[i] = alphabet[rng.Intn(len(alphabet))]
		}
		for _, stop := range []int{math.MaxInt, 3} {
			if got, want := yamlNodeBound(data, stop), ref(data, stop); got != want {
				t.Fatalf("%q (stop %d): %d, want %d", data, stop, got, want)
			}
		}
	}
}
