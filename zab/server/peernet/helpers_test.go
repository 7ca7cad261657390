package peernet

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
)

// waitFor bounds every wait on the network in these tests.
const waitFor = 10 * time.Second

// logBuffer is a slog destination tests can search.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // capacity 1: something was written
}

func newLogBuffer() *logBuffer { return &logBuffer{written: make(chan struct{}, 1)} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.written <- struct{}{}:
	default:
	}
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitLog polls the log until it holds every part, in one line.
func (l *logBuffer) waitLog(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		for _, line := range strings.Split(l.String(), "\n") {
			if containsAll(line, parts) {
				return line
			}
		}
		select {
		case <-l.written:
		case <-deadline:
			t.Fatalf("no log line with %q in:\n%s", parts, l.String())
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// testNode is one Net of a test ensemble, with its log.
type testNode struct {
	*Net
	id  int64
	log *logBuffer
}

// listeners binds loopback listeners for ids; extra ids get listeners too
// (for fake peers the test plays).
func listenAll(t *testing.T, ids []int64) (map[int64][2]net.Listener, []Member) {
	t.Helper()
	lns := map[int64][2]net.Listener{}
	var members []Member
	for _, id := range ids {
		q, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		e, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns[id] = [2]net.Listener{q, e}
		members = append(members, Member{ID: id, QuorumAddr: q.Addr().String(), ElectionAddr: e.Addr().String()})
	}
	return lns, members
}

// startNets starts a Net for each of ids (the members are ids plus fakes,
// whose listeners the caller gets back to play those servers by hand).
func startNets(t *testing.T, ids, fakes []int64, tweak func(*Config)) (map[int64]*testNode, map[int64][2]net.Listener, []Member) {
	t.Helper()
	lns, members := listenAll(t, append(append([]int64{}, ids...), fakes...))
	nodes := map[int64]*testNode{}
	for _, id := range ids {
		lb := newLogBuffer()
		cfg := Config{
			Self: id, Members: members, Log: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})),
			QuorumListener: lns[id][0], ElectionListener: lns[id][1],
			QuorumConfig: []byte(dynamicConfig(members)),
		}
		if tweak != nil {
			tweak(&cfg)
		}
		n, err := New(cfg)
		require.NoError(t, err)
		n.Start()
		t.Cleanup(n.Close)
		nodes[id] = &testNode{Net: n, id: id, log: lb}
	}
	for _, id := range fakes {
		t.Cleanup(func() { lns[id][0].Close(); lns[id][1].Close() })
	}
	return nodes, lns, members
}

func dynamicConfig(members []Member) string {
	var b strings.Builder
	for _, m := range members {
		fmt.Fprintf(&b, "server.%d=%s:%s:participant\n", m.ID, m.QuorumAddr, strings.Split(m.ElectionAddr, ":")[1])
	}
	return b.String() + "version=0"
}

// next returns the next event of n, failing after waitFor.
func (n *testNode) next(t *testing.T) zab.Event {
	t.Helper()
	select {
	case ev := <-n.Events():
		return ev
	case <-time.After(waitFor):
		t.Fatalf("server %d: no event within %v; log:\n%s", n.id, waitFor, n.log.String())
		return nil
	}
}

// nextVote skips events until a vote arrives.
func (n *testNode) nextVote(t *testing.T) zab.PeerVote {
	t.Helper()
	for {
		if v, ok := n.next(t).(zab.PeerVote); ok {
			return v
		}
	}
}

// noEventQueued checks that no event is waiting now.
func (n *testNode) noEventQueued(t *testing.T) {
	t.Helper()
	select {
	case ev := <-n.Events():
		t.Fatalf("server %d: unexpected event %#v", n.id, ev)
	default:
	}
}

func vote(to int64, leader int64) zab.Vote {
	return zab.Vote{To: to, Notification: wire.Notification{State: wire.PeerLooking, Leader: leader, Zxid: 5, ElectionEpoch: 1, PeerEpoch: 1, Version: wire.NotificationVersion}}
}

// readFrame reads one election frame from a raw connection.
func readFrame(t *testing.T, br *bufio.Reader) wire.Notification {
	t.Helper()
	fr := wire.NewFrameReader(br, wire.ElectionMaxMessage)
	frame, err := fr.ReadFrame()
	require.NoError(t, err)
	var note wire.Notification
	require.NoError(t, wire.Unmarshal(frame, &note))
	return note
}

// expectClosed waits until the peer closes nc (a read ends).
func expectClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(waitFor))
	buf := make([]byte, 1024)
	for {
		if _, err := nc.Read(buf); err != nil {
			require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the connection was not closed")
			return
		}
	}
}

// syncSnapshot is what a leader streams after SNAP: a session table, a
// tree of nodes znodes (with data and an ACL of their own), the signature.
func syncSnapshot(t testing.TB, nodes int) []byte {
	t.Helper()
	tree := datatree.New(datatree.Config{})
	for i := 1; i <= nodes; i++ {
		txn := datatree.Txn{
			Header: wire.TxnHeader{ClientID: 1, Cxid: int32(i), Zxid: int64(i), Time: 1, Type: wire.OpCreate},
			Body:   &wire.CreateTxn{Path: fmt.Sprintf("/n%d", i), Data: bytes.Repeat([]byte{byte(i)}, i), ACL: wire.OpenACLUnsafe, ParentCVersion: int32(i)},
		}
		if i%2 == 0 {
			txn.Body.(*wire.CreateTxn).ACL = []wire.ACL{{Perms: wire.PermRead, ID: wire.Id{Scheme: "digest", ID: fmt.Sprintf("u%d:x", i)}}}
		}
		res, _ := tree.Apply(&txn, nil)
		require.Equal(t, wire.ErrOK, res.Err, "create /n%d", i)
	}
	e := wire.NewEncoder(nil)
	e.WriteInt(2)
	for _, id := range []int64{0x100, 0x200} {
		e.WriteLong(id)
		e.WriteInt(4000)
	}
	tree.WriteSnapshot(e)
	e.WriteString(wire.SnapshotSignature)
	return e.Bytes()
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// acceptRaw accepts a connection on a fake peer's listener, within waitFor.
func acceptRaw(t *testing.T, ln net.Listener) (net.Conn, error) {
	t.Helper()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(waitFor))
	return ln.Accept()
}
