package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// dialZK connects go-zookeeper to addr and waits for the session.
func dialZK(t *testing.T, addr string, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, timeout, zk.WithLogger(log.New(io.Discard, "", 0)))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	waitState(t, events, zk.StateHasSession)
	return c, events
}

// waitState reads session events until state arrives or 10s pass.
func waitState(t *testing.T, events <-chan zk.Event, state zk.State) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == state {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within 10s", state)
		}
	}
}

// waitEvent returns the watch's event, failing after 10s.
func waitEvent(t *testing.T, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not fire within 10s")
	}
	return zk.Event{}
}

// eventually polls cond every 20ms until it holds or 10s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var worldACL = zk.WorldACL(zk.PermAll)

func TestGoZookeeperOperations(t *testing.T) {
	ts := startServer(t, nil)
	c, _ := dialZK(t, ts.addr, 10*time.Second)

	p, err := c.Create("/ops", []byte("root"), 0, worldACL)
	require.NoError(t, err)
	assert.Equal(t, "/ops", p)
	seq, err := c.Create("/ops/s-", nil, zk.FlagSequence, worldACL)
	require.NoError(t, err)
	assert.Equal(t, "/ops/s-0000000000", seq)
	eph, err := c.Create("/ops/e", nil, zk.FlagEphemeral, worldACL)
	require.NoError(t, err)
	ephSeq, err := c.Create("/ops/es-", nil, zk.FlagEphemeral|zk.FlagSequence, worldACL)
	require.NoError(t, err)
	assert.Equal(t, "/ops/es-0000000002", ephSeq)
	prot, err := c.CreateProtectedEphemeralSequential("/ops/lock-", nil, worldACL)
	require.NoError(t, err)
	assert.Contains(t, prot, "_c_")

	_, err = c.Create("/ops", nil, 0, worldACL)
	assert.ErrorIs(t, err, zk.ErrNodeExists)
	_, err = c.Create("/missing/child", nil, 0, worldACL)
	assert.ErrorIs(t, err, zk.ErrNoNode)
	_, err = c.Create("/ops/e/child", nil, 0, worldACL)
	assert.ErrorIs(t, err, zk.ErrNoChildrenForEphemerals)

	data, st, err := c.Get("/ops")
	require.NoError(t, err)
	assert.Equal(t, []byte("root"), data)
	assert.Equal(t, int32(4), st.NumChildren)
	st2, err := c.Set("/ops", []byte("v2"), st.Version)
	require.NoError(t, err)
	assert.Equal(t, st.Version+1, st2.Version)
	assert.Greater(t, st2.Mzxid, st.Mzxid)
	_, err = c.Set("/ops", nil, st.Version)
	assert.ErrorIs(t, err, zk.ErrBadVersion)

	kids, _, err := c.Children("/ops")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"s-0000000000", "e", "es-0000000002", prot[len("/ops/"):]}, kids)
	ok, _, err := c.Exists(eph)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, _, err = c.Exists("/nope")
	require.NoError(t, err)
	assert.False(t, ok)

	acl, _, err := c.GetACL("/ops")
	require.NoError(t, err)
	assert.Equal(t, worldACL, acl)
	_, err = c.SetACL("/ops", zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermCreate|zk.PermDelete|zk.PermAdmin), 0)
	require.NoError(t, err)
	synced, err := c.Sync("/ops")
	require.NoError(t, err)
	assert.Equal(t, "/ops", synced)

	res, err := c.Multi(
		&zk.CreateRequest{Path: "/ops/m", Data: []byte("x"), Acl: worldACL},
		&zk.SetDataRequest{Path: "/ops/m", Data: []byte("y"), Version: 0},
		&zk.CheckVersionRequest{Path: "/ops/m", Version: 1},
		&zk.DeleteRequest{Path: seq, Version: -1},
	)
	require.NoError(t, err)
	require.Len(t, res, 4)
	assert.Equal(t, "/ops/m", res[0].String)
	_, err = c.Multi(
		&zk.SetDataRequest{Path: "/ops/m", Data: []byte("z"), Version: -1},
		&zk.DeleteRequest{Path: "/ops/absent", Version: -1},
	)
	assert.ErrorIs(t, err, zk.ErrNoNode)
	data, _, err = c.Get("/ops/m")
	require.NoError(t, err)
	assert.Equal(t, []byte("y"), data, "the failed multi changed nothing")

	_, err = c.IncrementalReconfig(nil, []string{"2"}, -1)
	assert.ErrorIs(t, err, zk.ErrReconfigDisabled, "as ZooKeeper 3.8 standalone with reconfigEnabled=false")
	assert.Equal(t, ts.addr, c.Server())

	require.NoError(t, c.Delete("/ops/m", -1))
	assert.ErrorIs(t, c.Delete("/ops", -1), zk.ErrNotEmpty)
	assert.ErrorIs(t, c.Delete("/ops/m", -1), zk.ErrNoNode)
}

func TestGoZookeeperWatches(t *testing.T) {
	ts := startServer(t, nil)
	c, _ := dialZK(t, ts.addr, 10*time.Second)
	other, _ := dialZK(t, ts.addr, 10*time.Second)

	_, err := c.Create("/w", nil, 0, worldACL)
	require.NoError(t, err)
	_, _, dataCh, err := c.GetW("/w")
	require.NoError(t, err)
	_, _, childCh, err := c.ChildrenW("/w")
	require.NoError(t, err)
	_, _, existCh, err := c.ExistsW("/w/kid")
	require.NoError(t, err)

	_, err = other.Set("/w", []byte("1"), -1)
	require.NoError(t, err)
	assert.Equal(t, zk.EventNodeDataChanged, waitEvent(t, dataCh).Type)
	_, err = other.Create("/w/kid", nil, 0, worldACL)
	require.NoError(t, err)
	assert.Equal(t, zk.EventNodeCreated, waitEvent(t, existCh).Type)
	ev := waitEvent(t, childCh)
	assert.Equal(t, zk.EventNodeChildrenChanged, ev.Type)
	assert.Equal(t, "/w", ev.Path)

	_, _, delCh, err := c.GetW("/w/kid")
	require.NoError(t, err)
	require.NoError(t, other.Delete("/w/kid", -1))
	assert.Equal(t, zk.EventNodeDeleted, waitEvent(t, delCh).Type)
}

func TestGoZookeeperACLAndAuth(t *testing.T) {
	ts := startServer(t, nil)
	owner, _ := dialZK(t, ts.addr, 10*time.Second)
	stranger, _ := dialZK(t, ts.addr, 10*time.Second)
	require.NoError(t, owner.AddAuth("digest", []byte("alice:secret")))
	_, err := owner.Create("/private", []byte("s"), 0, zk.DigestACL(zk.PermAll, "alice", "secret"))
	require.NoError(t, err)

	_, _, err = stranger.Get("/private")
	assert.ErrorIs(t, err, zk.ErrNoAuth)
	require.NoError(t, stranger.AddAuth("digest", []byte("alice:wrong")))
	_, _, err = stranger.Get("/private")
	assert.ErrorIs(t, err, zk.ErrNoAuth, "a wrong password is a different identity")
	require.NoError(t, stranger.AddAuth("digest", []byte("alice:secret")))
	data, _, err := stranger.Get("/private")
	require.NoError(t, err)
	assert.Equal(t, []byte("s"), data)
	ok, _, err := stranger.Exists("/private")
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestGoZookeeperTTLAndContainer(t *testing.T) {
	ts := startServer(t, nil)
	c, _ := dialZK(t, ts.addr, 10*time.Second)

	_, err := c.CreateContainer("/box", nil, zk.FlagContainer, worldACL)
	require.NoError(t, err)
	_, err = c.Create("/box/item", nil, 0, worldACL)
	require.NoError(t, err)
	_, err = c.CreateTTL("/ttl", nil, zk.FlagTTL, worldACL, 300*time.Millisecond)
	require.NoError(t, err)
	_, st, err := c.Get("/ttl")
	require.NoError(t, err)
	assert.Zero(t, st.EphemeralOwner, "a TTL node reads ephemeralOwner 0")

	_, _, boxGone, err := c.ExistsW("/box")
	require.NoError(t, err)
	require.NoError(t, c.Delete("/box/item", -1))
	assert.Equal(t, zk.EventNodeDeleted, waitEvent(t, boxGone).Type, "the emptied container is reaped")
	eventually(t, "the TTL node expires", func() bool {
		ok, _, err := c.Exists("/ttl")
		return err == nil && !ok
	})
}

// TestSessionExpiry: a session that stops pinging expires; its ephemeral
// goes and a watcher in another session sees it; the expired session cannot
// be resumed.
func TestSessionExpiry(t *testing.T) {
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	silent, err := client.Dial(ctx, ts.addr, client.Session{Timeout: 400 * time.Millisecond})
	require.NoError(t, err)
	_, err = silent.Create(ctx, "/lease", nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)
	sess := silent.Session()
	require.NoError(t, silent.Close()) // no closeSession, no more pings

	watcher, _ := dialZK(t, ts.addr, 10*time.Second)
	ok, _, ch, err := watcher.ExistsW("/lease")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, zk.EventNodeDeleted, waitEvent(t, ch).Type)

	_, err = client.Dial(ctx, ts.addr, sess)
	assert.ErrorIs(t, err, wire.ErrSessionExpired)
}

// TestSessionSurvivesRestart: a graceful restart within the session timeout
// keeps the session, its ephemerals and the data; go-zookeeper reconnects to
// the same session by itself.
func TestSessionSurvivesRestart(t *testing.T) {
	cfg := testConfig(t.TempDir())
	ts := startServer(t, cfg)
	c, events := dialZK(t, ts.addr, 10*time.Second)
	id := c.SessionID()
	_, err := c.Create("/persist", []byte("p"), 0, worldACL)
	require.NoError(t, err)
	_, err = c.Create("/mine", nil, zk.FlagEphemeral, worldACL)
	require.NoError(t, err)

	ts.stop(t)
	l, err := net.Listen("tcp", ts.addr)
	require.NoError(t, err, "listen again on the same port")
	restarted := startServer(t, cfg, func(o *Options) { o.Listener = l })
	waitState(t, events, zk.StateHasSession)
	assert.Equal(t, id, c.SessionID(), "the same session")
	ok, st, err := c.Exists("/mine")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, id, st.EphemeralOwner)
	data, _, err := c.Get("/persist")
	require.NoError(t, err)
	assert.Equal(t, []byte("p"), data)
	_ = restarted
}

func TestGoZookeeperNoNodeErrorsAreErrors(t *testing.T) {
	ts := startServer(t, nil)
	c, _ := dialZK(t, ts.addr, 10*time.Second)
	_, _, err := c.Get("/absent")
	assert.True(t, errors.Is(err, zk.ErrNoNode))
}

// TestSessionLogLines: session creation, closing and expiry each get a log
// line.
func TestSessionLogLines(t *testing.T) {
	var logs lockedBuffer
	ts := startServer(t, nil, func(o *Options) { o.Log = slog.New(slog.NewTextHandler(&logs, nil)) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	closing := dial(t, ctx, ts.addr)
	require.NoError(t, closing.CloseSession(ctx))
	expiring, err := client.Dial(ctx, ts.addr, client.Session{Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, expiring.Close())
	eventually(t, "the expiry is logged", func() bool {
		return strings.Contains(logs.String(), `msg="session expired" session=`+sessionHex(expiring.SessionID()))
	})
	out := logs.String()
	assert.Contains(t, out, `msg="session created" session=`+sessionHex(closing.SessionID()))
	assert.Contains(t, out, `msg="session closed" session=`+sessionHex(closing.SessionID()))
	assert.Contains(t, out, `msg="connection opened"`)
	assert.Contains(t, out, `msg="connection closed"`)
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test to share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
