package datatree

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestNodeSize: a node stays in the 96-byte size class; a field added
// without taking one away costs 16 bytes per znode.
func TestNodeSize(t *testing.T) {
	require.Equal(t, uintptr(96), unsafe.Sizeof(node{}))
}

// TestNodeData: null, empty and other data come back as they were set.
func TestNodeData(t *testing.T) {
	var n node
	n.setData(nil)
	require.Nil(t, n.data())
	n.setData([]byte{})
	require.NotNil(t, n.data())
	require.Empty(t, n.data())
	b := []byte("abc")
	n.setData(b[:2])
	require.Equal(t, []byte("ab"), n.data())
	require.Equal(t, 2, cap(n.data()), "a reader cannot append into the rest of the buffer")
}

// TestPathIndexMatchesAMap: puts, removes and gets, many enough to grow
// and split tables and to fill them with tombstones, agree with a map, and
// each visits every node once.
func TestPathIndexMatchesAMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		x := newPathIndex()
		model := map[string]*node{}
		universe := rapid.IntRange(1, 5000).Draw(rt, "universe")
		ops := rapid.IntRange(0, 6000).Draw(rt, "ops")
		putBias := rapid.IntRange(1, 9).Draw(rt, "putBias") // of 10
		for range ops {
			p := fmt.Sprintf("/p/%d", rapid.IntRange(0, universe-1).Draw(rt, "path"))
			switch put := rapid.IntRange(0, 9).Draw(rt, "op") < putBias; {
			case put && model[p] == nil:
				n := newNode(p)
				x.put(n)
				model[p] = n
			case !put:
				x.remove(p)
				delete(model, p)
			}
			if x.get(p) != model[p] {
				rt.Fatalf("get %s: %p, want %p", p, x.get(p), model[p])
			}
		}
		if x.len() != len(model) {
			rt.Fatalf("len %d, want %d", x.len(), len(model))
		}
		seen := map[string]bool{}
		x.each(func(n *node) {
			if seen[n.path()] || model[n.path()] != n {
				rt.Fatalf("each: %s twice or not held", n.path())
			}
			seen[n.path()] = true
		})
		if len(seen) != len(model) {
			rt.Fatalf("each visited %d nodes, want %d", len(seen), len(model))
		}
		for p, n := range model {
			if x.get(p) != n {
				rt.Fatalf("get %s after the ops: %p, want %p", p, x.get(p), n)
			}
		}
	})
}

// TestPathIndexChurn: creating and deleting the same few paths forever
// leaves the tables their size (tombstones are cleared, not accumulated).
func TestPathIndexChurn(t *testing.T) {
	x := newPathIndex()
	for i := range 2000 {
		x.put(newNode(fmt.Sprintf("/keep/%d", i)))
	}
	dirLen := len(x.dir)
	for i := range 200_000 {
		p := fmt.Sprintf("/churn/%d", i%50)
		if x.get(p) == nil {
			x.put(newNode(p))
		} else {
			x.remove(p)
		}
	}
	require.Equal(t, dirLen, len(x.dir))
	require.Equal(t, 2000, x.len()) // 100,000 puts and as many removes of each of 50 paths
}

// TestPathIndexGetChild: a child is found from its parent's path and its
// name as from its own path, under the root too.
func TestPathIndexGetChild(t *testing.T) {
	x := newPathIndex()
	paths := []string{"/", "/a", "/a/b", "/ab", "/a/bc", "/a/b/c"}
	for _, p := range paths {
		x.put(newNode(p))
	}
	for _, p := range paths[1:] {
		parent, name, _ := splitPath(p)
		require.Same(t, x.get(p), x.getChild(parent, name), "%s", p)
	}
	require.Nil(t, x.getChild("/a", "x"))
	require.Nil(t, x.getChild("/", "b"))
}
