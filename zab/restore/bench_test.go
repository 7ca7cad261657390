package restore_test

import (
	"fmt"
	mathrand "math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/restore"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// BenchmarkRecover measures what a restarted member does before it can
// vote: open the data directory, read and check the log (Load), and replay
// it into a fresh Peer (Replay). The log holds a session, 100 znodes and
// 50,000 setData txns of 100 bytes on them, as zabbench's write phases
// leave it (no snapshot: snapCount is 100,000). It reports the time of
// each part per txn.
//
//	go test ./zab/restore -run XXX -bench Recover -benchtime 5x
func BenchmarkRecover(b *testing.B) {
	const nodes, writes = 100, 50000
	txns := history(nodes)
	data := make([]byte, 100)
	for i := range writes {
		zxid := int64(len(txns) + 1)
		txns = append(txns, datatree.Txn{
			Header: wire.TxnHeader{ClientID: sessionID, Cxid: int32(zxid), Zxid: zxid, Time: 1000, Type: wire.OpSetData},
			Body:   &wire.SetDataTxn{Path: fmt.Sprintf("/n%d", 1+i%nodes), Data: data, Version: int32(1 + i/nodes)},
		})
	}
	dir := b.TempDir()
	open := func() *storage.Store { // zabd's default snapCount: one log file
		store, err := storage.Open(storage.Options{FS: vfs.OS{}, Dir: dir, SnapCount: 100000, Rand: mathrand.New(mathrand.NewSource(1))})
		require.NoError(b, err)
		return store
	}
	logTxns(b, open(), txns)
	var load, replay time.Duration
	for b.Loop() {
		began := time.Now()
		rec, restored, err := restore.Load(open(), treeCfg)
		require.NoError(b, err)
		mid := time.Now()
		_, n := start(b, rec, restored)
		replay += time.Since(mid)
		load += mid.Sub(began)
		require.Equal(b, len(txns), n)
		require.NoError(b, rec.Log.Close())
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*len(txns)) }
	b.ReportMetric(per(load), "load-ns/txn")
	b.ReportMetric(per(replay), "replay-ns/txn")
}
