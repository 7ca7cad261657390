package datatree

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zabd/zabd/wire"
)

// The benchmarks run on a tree of benchNodes znodes: benchParents parents
// under the root, each with the same number of children, 10-character names
// and 100 bytes of data, built once per process.
const (
	benchNodes   = 1_000_000
	benchParents = 1_000
	benchData    = 100
)

var (
	benchOnce  sync.Once
	benchTree  *Tree
	benchPaths []string // the leaves
	benchZxid  int64
)

func benchName(i int) string { return fmt.Sprintf("n%09d", i) }

// buildBenchTree creates the tree through Prepare and Apply, as a replica would.
func buildBenchTree(n, parents int) (*Tree, []string, int64) {
	tr := New(Config{})
	zxid := int64(0)
	write := func(req *Request) {
		zxid++
		txn := tr.Prepare(req, zxid, 1_700_000_000_000+zxid)
		if r, _ := tr.Apply(&txn, nil); r.Err != wire.ErrOK {
			panic(fmt.Sprintf("building bench tree: %v", r.Err))
		}
	}
	create := func(path string) {
		// Every node has its own data, as a decoded request would give it.
		data := make([]byte, benchData)
		write(&Request{Session: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: path, Data: data, ACL: wire.OpenACLUnsafe}})
	}
	parentPaths := make([]string, parents)
	for i := range parentPaths {
		parentPaths[i] = "/" + benchName(i)
		create(parentPaths[i])
	}
	leaves := make([]string, 0, n-parents)
	for i := parents; i < n; i++ {
		p := parentPaths[i%parents] + "/" + benchName(i)
		create(p)
		leaves = append(leaves, p)
	}
	return tr, leaves, zxid
}

// benchSetup builds the shared tree and starts counting CPU time: the
// machines these run on are shared, so besides wall-clock ns/op each
// benchmark reports the process's CPU time per op (cpu-ns/op, GC included),
// which other processes' load does not inflate.
func benchSetup(b *testing.B) {
	b.Helper()
	benchOnce.Do(func() { benchTree, benchPaths, benchZxid = buildBenchTree(benchNodes, benchParents) })
	runtime.GC()
	start := cpuTime()
	b.Cleanup(func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") })
	b.ResetTimer()
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkGetData(b *testing.B) {
	benchSetup(b)
	for i := 0; i < b.N; i++ {
		p := benchPaths[(i*7919)%len(benchPaths)]
		if _, _, err := benchTree.GetData(p, nil, false, 0); err != wire.ErrOK {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetChildren(b *testing.B) {
	benchSetup(b)
	for i := 0; i < b.N; i++ {
		p := "/" + benchName(i%benchParents)
		if kids, _, err := benchTree.GetChildren(p, nil, false, 0); err != wire.ErrOK || len(kids) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetDataApply measures Apply of prepared setData txns.
func BenchmarkSetDataApply(b *testing.B) {
	benchSetup(b)
	data := make([]byte, benchData)
	txns := make([]Txn, 4096)
	for i := range txns {
		p := benchPaths[(i*7919)%len(benchPaths)]
		txns[i] = Txn{Header: wire.TxnHeader{Type: wire.OpSetData, Time: 1}, Body: &wire.SetDataTxn{Path: p, Data: data, Version: 1}}
	}
	var events []WatchEvent
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		txn := &txns[i%len(txns)]
		benchZxid++
		txn.Header.Zxid = benchZxid
		var r Result
		r, events = benchTree.Apply(txn, events[:0])
		if r.Err != wire.ErrOK {
			b.Fatal(r.Err)
		}
	}
}

// BenchmarkSetData measures Prepare and Apply together; the requests are
// built beforehand, as the wire decoder hands them over.
func BenchmarkSetData(b *testing.B) {
	data := make([]byte, benchData)
	benchSetup(b)
	reqs := make([]Request, 4096)
	for i := range reqs {
		p := benchPaths[(i*7919)%len(benchPaths)]
		reqs[i] = Request{Session: 1, Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: p, Data: data, Version: -1}}
	}
	var events []WatchEvent
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchZxid++
		txn := benchTree.Prepare(&reqs[i%len(reqs)], benchZxid, 1)
		var r Result
		r, events = benchTree.Apply(&txn, events[:0])
		if r.Err != wire.ErrOK {
			b.Fatal(r.Err)
		}
	}
}

// BenchmarkCreateDelete creates a node through Prepare and Apply and deletes
// it again, so the tree stays at its size; it reports per create+delete
// pair. The requests are built beforehand.
func BenchmarkCreateDelete(b *testing.B) {
	data := make([]byte, benchData)
	benchSetup(b)
	creates := make([]Request, 4096)
	deletes := make([]Request, len(creates))
	for i := range creates {
		p := "/" + benchName(i%benchParents) + "/x" + benchName(i)
		creates[i] = Request{Session: 1, Op: wire.OpCreate, Body: &wire.CreateRequest{Path: p, Data: data, ACL: wire.OpenACLUnsafe}}
		deletes[i] = Request{Session: 1, Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: p, Version: -1}}
	}
	var events []WatchEvent
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchZxid++
		txn := benchTree.Prepare(&creates[i%len(creates)], benchZxid, 1)
		r, ev := benchTree.Apply(&txn, events[:0])
		if r.Err != wire.ErrOK {
			b.Fatal(r.Err)
		}
		benchZxid++
		txn = benchTree.Prepare(&deletes[i%len(deletes)], benchZxid, 1)
		r, events = benchTree.Apply(&txn, ev[:0])
		if r.Err != wire.ErrOK {
			b.Fatal(r.Err)
		}
	}
}

// BenchmarkMemoryPerZnode builds a tree of benchNodes znodes (10-character
// names, 100 bytes of data each) and reports the heap it holds per znode
// after GC, and that figure less the name's and the data's bytes (the
// overhead: node, index, full path, the parent's entry, allocator slack).
func BenchmarkMemoryPerZnode(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr, leaves, _ := buildBenchTree(benchNodes, benchParents)
		leaves = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		per := float64(after.HeapAlloc-before.HeapAlloc) / float64(tr.NodeCount())
		b.ReportMetric(per, "B/znode")
		b.ReportMetric(per-benchData-10, "overheadB/znode")
		runtime.KeepAlive(tr)
		runtime.KeepAlive(leaves)
	}
}

// BenchmarkLoad loads a snapshot of the benchmark tree (1,000,000 znodes),
// as a restarting server does once it has read the file: one op is one
// whole load.
func BenchmarkLoad(b *testing.B) {
	benchOnce.Do(func() { benchTree, benchPaths, benchZxid = buildBenchTree(benchNodes, benchParents) })
	var e wire.Encoder
	benchTree.WriteSnapshot(&e)
	snap := e.Bytes()
	runtime.GC()
	start := cpuTime()
	b.Cleanup(func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := Load(Config{}, wire.NewDecoder(snap), benchZxid)
		if err != nil || tr.NodeCount() != benchTree.NodeCount() {
			b.Fatal(err)
		}
	}
}
