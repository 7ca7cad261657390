package datatree

import (
	"sort"

	"github.com/zabd/zabd/wire"
)

// ReapCandidates returns the deleteContainer requests ZooKeeper's
// ContainerManager would issue on one pass at wall time nowMs, sorted by
// path: containers without children that have had one (stored cversion > 0),
// or that never had one and are older than maxNeverUsedMs (0 disables that,
// ZooKeeper's default), and TTL nodes without children whose mtime + ttl has
// passed. The requests are Internal, with session 0 and cxid 0, and name
// the node chosen (ReapCzxid, ReapMzxid); they go through Prepare like any
// write, which checks again against pending changes that it is still that
// node, childless. Nested containers empty out in successive passes.
func (t *Tree) ReapCandidates(nowMs, maxNeverUsedMs int64) []Request {
	var paths []string // chosen, each named by its node in the request
	for p := range t.containers {
		n := t.nodes.get(p)
		if n == nil || len(t.kids(n)) > 0 {
			continue
		}
		if n.cversion > 0 || (maxNeverUsedMs != 0 && nowMs-n.mtime > maxNeverUsedMs) {
			paths = append(paths, p)
		}
	}
	for p := range t.ttls {
		n := t.nodes.get(p)
		if n == nil || len(t.kids(n)) > 0 || t.kindOf(n.owner) != kindTTL {
			continue
		}
		if ttl := ttlOf(n.owner); ttl != 0 && nowMs-n.mtime > ttl {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	reqs := make([]Request, len(paths))
	for i, p := range paths {
		n := t.nodes.get(p)
		reqs[i] = Request{Op: wire.OpDeleteContainer, Body: &wire.PathRequest{Path: p}, Internal: true,
			ReapCzxid: n.czxid, ReapMzxid: n.mzxid}
	}
	return reqs
}
