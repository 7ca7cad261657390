// Command mkdata writes a data directory with zabd's storage and datatree
// (txn log files, a fuzzy snapshot taken while writes go on, epoch files)
// and the tree it holds as JSON, for scripts/interop.sh to start Debian's
// ZooKeeper 3.8 on and compare. It lives under testdata so that
// `go test ./...` and `go build ./...` leave it alone:
//
//	go run ./zab/storage/testdata/mkdata -dir DATADIR -expected tree.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"os"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/testdata/zktree"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// Sessions: one stays open (its ephemeral must survive in ZooKeeper until the
// session expires, after its timeout), one closes (its ephemeral goes).
const (
	openSession    = 0x10000aa0001
	closingSession = 0x10000aa0002
	sessionTimeout = 60000
	epoch          = 1
)

type writer struct {
	store    *storage.Store
	log      *storage.Log
	tree     *datatree.Tree
	counter  int64
	time     int64
	sessions map[int64]int32
	snap     *datatree.Snapshot // a fuzzy snapshot in progress
	snapEnc  *wire.Encoder
	snapSess []storage.Session
}

func main() {
	dir := flag.String("dir", "", "data directory to write (must not exist or be empty)")
	expected := flag.String("expected", "", "file to write the resulting tree to, as JSON")
	flag.Parse()
	if *dir == "" || *expected == "" {
		log.Fatal("usage: mkdata -dir DATADIR -expected tree.json")
	}
	store, err := storage.Open(storage.Options{FS: vfs.OS{}, Dir: *dir, SnapCount: 40, Rand: rand.New(rand.NewSource(1))})
	if err != nil {
		log.Fatal(err)
	}
	rec, err := store.Recover(func(*wire.Decoder, int64) error { return nil })
	if err != nil {
		log.Fatal(err)
	}
	if rec.LastZxid != 0 {
		log.Fatalf("%s already holds data (last zxid %#x)", *dir, rec.LastZxid)
	}
	for _, set := range []func(int64) error{store.SetAcceptedEpoch, store.SetCurrentEpoch} {
		if err := set(epoch); err != nil {
			log.Fatal(err)
		}
	}
	w := &writer{store: store, log: rec.Log, tree: datatree.New(datatree.Config{}), time: 1700000000000, sessions: map[int64]int32{}}
	w.run()
	if err := w.log.Close(); err != nil {
		log.Fatal(err)
	}
	if err := writeExpected(w.tree, *expected); err != nil {
		log.Fatal(err)
	}
}

var worldAll = []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}}

func (w *writer) run() {
	w.write(openSession, wire.OpCreateSession, &wire.CreateSessionTxn{TimeOut: sessionTimeout})
	w.write(closingSession, wire.OpCreateSession, &wire.CreateSessionTxn{TimeOut: sessionTimeout})
	w.create(openSession, "/app", "root of the test tree", wire.ModePersistent, worldAll)
	for i := 0; i < 30; i++ {
		w.create(openSession, fmt.Sprintf("/app/n%02d", i), fmt.Sprintf("v%d", i), wire.ModePersistent, worldAll)
		if i == 10 {
			w.startSnapshot()
		}
	}
	for i := 0; i < 30; i += 3 {
		w.write(openSession, wire.OpSetData, &wire.SetDataRequest{Path: fmt.Sprintf("/app/n%02d", i), Data: []byte(fmt.Sprintf("updated %d", i)), Version: -1})
	}
	for i := 1; i < 30; i += 5 {
		w.write(openSession, wire.OpDelete, &wire.PathVersionRequest{Path: fmt.Sprintf("/app/n%02d", i), Version: -1})
	}
	w.create(openSession, "/app/seq-", "s", wire.ModePersistentSequential, worldAll)
	w.create(openSession, "/app/seq-", "s", wire.ModePersistentSequential, worldAll)
	w.create(openSession, "/secret", "hidden", wire.ModePersistent, []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: datatree.DigestID("u:p")}}})
	w.create(openSession, "/app/ephemeral", "mine", wire.ModeEphemeral, worldAll)
	w.create(closingSession, "/app/gone", "closing", wire.ModeEphemeral, worldAll)
	w.write(openSession, wire.OpSetACL, &wire.SetACLRequest{Path: "/app/n03", ACL: []wire.ACL{{Perms: wire.PermRead | wire.PermWrite, ID: wire.Id{Scheme: "world", ID: "anyone"}}}, Version: -1})
	w.write(openSession, wire.OpMulti, &datatree.MultiRequest{Ops: []datatree.MultiOp{
		{Op: wire.OpCreate, Body: &wire.CreateRequest{Path: "/multi1", Data: []byte("m"), ACL: worldAll, Flags: wire.ModePersistent}},
		{Op: wire.OpSetData, Body: &wire.SetDataRequest{Path: "/app/n00", Data: []byte("in a multi"), Version: -1}},
		{Op: wire.OpDelete, Body: &wire.PathVersionRequest{Path: "/app/n02", Version: -1}},
	}})
	// A failed write is logged too (as an error txn).
	w.create(openSession, "/app/n00", "exists already", wire.ModePersistent, worldAll)
	w.write(closingSession, wire.OpCloseSession, nil)
	for i := 0; i < 40; i++ { // enough to roll the log again
		w.write(openSession, wire.OpSetData, &wire.SetDataRequest{Path: "/app/n04", Data: []byte(fmt.Sprintf("round %d", i)), Version: -1})
	}
	if w.snap != nil {
		log.Fatal("the snapshot never completed")
	}
}

func (w *writer) create(session int64, path, data string, mode wire.CreateMode, acl []wire.ACL) {
	w.write(session, wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte(data), ACL: acl, Flags: mode})
}

// write prepares a request as the leader's pipeline would, logs it, makes it
// durable and only then applies it; a fuzzy snapshot in progress advances by
// a few nodes between applies.
func (w *writer) write(session int64, op wire.OpCode, body wire.Record) {
	w.counter++
	w.time += 7
	zxid := int64(epoch)<<32 | w.counter
	txn := w.tree.Prepare(&datatree.Request{Session: session, Cxid: int32(w.counter), Op: op, Body: body}, zxid, w.time)
	if _, err := w.log.Append(zab.EncodeTxnEntry(&txn)); err != nil {
		log.Fatal(err)
	}
	if _, err := w.log.Sync(); err != nil {
		log.Fatal(err)
	}
	w.tree.Apply(&txn, nil)
	switch txn.Header.Type {
	case wire.OpCreateSession:
		w.sessions[session] = body.(*wire.CreateSessionTxn).TimeOut
	case wire.OpCloseSession:
		delete(w.sessions, session)
	}
	if w.snap != nil && w.snap.Step(w.snapEnc, 3) {
		w.finishSnapshot()
	}
}

func (w *writer) startSnapshot() {
	w.snap = w.tree.StartSnapshot()
	w.snapEnc = wire.NewEncoder(nil)
	w.snapSess = nil
	for _, id := range []int64{openSession, closingSession} {
		if to, ok := w.sessions[id]; ok {
			w.snapSess = append(w.snapSess, storage.Session{ID: id, Timeout: to})
		}
	}
}

func (w *writer) finishSnapshot() {
	digest := storage.ZxidDigest{Zxid: w.tree.LastZxid(), Version: datatree.DigestVersion, Digest: w.tree.Digest()}
	tree := w.snapEnc.Bytes()
	_, err := w.store.WriteSnapshot(&storage.Snapshot{
		Zxid:      w.snap.Zxid(),
		Sessions:  w.snapSess,
		WriteTree: func(out io.Writer) error { _, err := out.Write(tree); return err },
		Digest:    func() storage.ZxidDigest { return digest },
	})
	if err != nil {
		log.Fatal(err)
	}
	w.snap = nil
}

func writeExpected(tree *datatree.Tree, file string) error {
	nodes, err := zktree.Read(tree, []wire.Id{{Scheme: "digest", ID: datatree.DigestID("u:p")}})
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(nodes, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}
