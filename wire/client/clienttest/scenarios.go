package clienttest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// Run runs every scenario as a subtest against the server at addr. Each
// scenario works under its own root node, so they do not disturb each other.
func Run(t *testing.T, addr string) {
	for _, sc := range []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, addr, root string)
	}{
		{"CRUD", crud},
		{"Pipelining", pipelining},
		{"WatchBeforeReply", watchBeforeReply},
		{"Multi", multi},
		{"MultiRead", multiRead},
		{"PersistentWatches", persistentWatches},
		{"RemoveWatches", removeWatches},
		{"EphemeralsAndCounts", ephemeralsAndCounts},
		{"AuthAndWhoAmI", authAndWhoAmI},
		{"ResumeSessionAndSetWatches2", resumeSessionAndSetWatches2},
		{"CloseSessionRemovesEphemerals", closeSession},
	} {
		t.Run(sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sc.fn(t, ctx, addr, "/"+sc.name)
		})
	}
}

// Dial opens a session for a test and closes it when the test ends.
func Dial(t *testing.T, ctx context.Context, addr string) *client.Conn {
	t.Helper()
	c, err := client.Dial(ctx, addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.CloseSession(context.Background()) })
	return c
}

func crud(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	p, st, err := c.Create2(ctx, root, []byte("r"), client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	assert.Equal(t, root, p)
	assert.Equal(t, st.Czxid, st.Mzxid)
	assert.Equal(t, int32(1), st.DataLength)

	seq, err := c.Create(ctx, root+"/s-", nil, client.OpenACL, wire.ModePersistentSequential)
	require.NoError(t, err)
	assert.Equal(t, root+"/s-0000000000", seq)

	_, err = c.Create(ctx, root, nil, client.OpenACL, wire.ModePersistent)
	assert.Equal(t, wire.ErrNodeExists, err)

	st2, err := c.SetData(ctx, root, []byte("xy"), 0)
	require.NoError(t, err)
	assert.Equal(t, int32(1), st2.Version)
	_, err = c.SetData(ctx, root, []byte("z"), 0)
	assert.Equal(t, wire.ErrBadVersion, err)

	data, st3, err := c.GetData(ctx, root, false)
	require.NoError(t, err)
	assert.Equal(t, []byte("xy"), data)
	assert.Equal(t, st2, st3)

	kids, st4, err := c.GetChildren2(ctx, root, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"s-0000000000"}, kids)
	assert.Equal(t, int32(1), st4.NumChildren)

	acl, _, err := c.GetACL(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, client.OpenACL, acl)
	_, err = c.SetACL(ctx, root, client.OpenACL, 0)
	require.NoError(t, err)

	assert.Equal(t, wire.ErrNotEmpty, c.Delete(ctx, root, -1))
	require.NoError(t, c.Delete(ctx, seq, -1))
	require.NoError(t, c.Delete(ctx, root, -1))
	_, err = c.Exists(ctx, root, false)
	assert.Equal(t, wire.ErrNoNode, err)

	synced, err := c.Sync(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, root, synced)
	require.NoError(t, c.Ping(ctx))
}

// pipelining sends many requests before reading any reply: replies come back
// in request order with increasing zxids for the writes.
func pipelining(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	_, err := c.Create(ctx, root, nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	const n = 64
	calls := make([]*client.Call, n)
	for i := range calls {
		calls[i], err = c.Send(wire.OpSetData, &wire.SetDataRequest{Path: root, Data: []byte(fmt.Sprint(i)), Version: -1})
		require.NoError(t, err)
	}
	var lastSeq uint64
	var lastZxid int64
	for i, call := range calls {
		r, err := call.Wait(ctx)
		require.NoError(t, err)
		var st wire.StatResponse
		require.NoError(t, r.Decode(&st))
		assert.Equal(t, int32(i+1), st.Stat.Version)
		assert.Greater(t, r.Seq, lastSeq)
		assert.Greater(t, r.Header.Zxid, lastZxid)
		lastSeq, lastZxid = r.Seq, r.Header.Zxid
	}
}

// watchBeforeReply: the writer's own watch event arrives before the reply
// to the write that fired it.
func watchBeforeReply(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	_, err := c.Create(ctx, root, nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	_, _, err = c.GetData(ctx, root, true)
	require.NoError(t, err)
	r, err := c.Do(ctx, wire.OpSetData, &wire.SetDataRequest{Path: root, Data: []byte("x"), Version: -1})
	require.NoError(t, err)
	ev, err := c.NextEvent(ctx)
	require.NoError(t, err)
	assert.Equal(t, wire.EventNodeDataChanged, ev.Type)
	assert.Equal(t, root, ev.Path)
	assert.Less(t, ev.Seq, r.Seq, "event before the reply")

	// exists on a missing node leaves a watch for its creation; the node's
	// event comes before the parent's child event.
	_, err = c.Exists(ctx, root+"/k", true)
	require.Equal(t, wire.ErrNoNode, err)
	_, err = c.GetChildren(ctx, root, true)
	require.NoError(t, err)
	_, err = c.Create(ctx, root+"/k", nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	ev1, err := c.NextEvent(ctx)
	require.NoError(t, err)
	ev2, err := c.NextEvent(ctx)
	require.NoError(t, err)
	assert.Equal(t, []wire.EventType{wire.EventNodeCreated, wire.EventNodeChildrenChanged}, []wire.EventType{ev1.Type, ev2.Type})
}

func multi(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	res, err := c.Multi(ctx,
		client.Op{Type: wire.OpCreate, Path: root, ACL: client.OpenACL},
		client.Op{Type: wire.OpCreate2, Path: root + "/a", ACL: client.OpenACL},
		client.Op{Type: wire.OpSetData, Path: root + "/a", Data: []byte("d"), Version: 0},
		client.Op{Type: wire.OpCheck, Path: root + "/a", Version: 1},
	)
	require.NoError(t, err)
	require.Len(t, res, 4)
	assert.Equal(t, root, res[0].Path)
	assert.Equal(t, wire.OpCreate, res[1].Type, "a create2 sub-op answers like create")
	assert.Equal(t, root+"/a", res[1].Path)
	assert.Equal(t, int32(1), res[2].Stat.Version)

	res, err = c.Multi(ctx,
		client.Op{Type: wire.OpSetData, Path: root + "/a", Version: -1},
		client.Op{Type: wire.OpDelete, Path: root + "/missing", Version: -1},
		client.Op{Type: wire.OpDelete, Path: root + "/a", Version: -1},
	)
	require.NoError(t, err, "a failed multi still has err 0 in its header")
	require.Len(t, res, 3)
	assert.Equal(t, []wire.ErrCode{wire.ErrOK, wire.ErrNoNode, wire.ErrRuntimeInconsistency},
		[]wire.ErrCode{res[0].Err, res[1].Err, res[2].Err})
	_, st, err := c.GetData(ctx, root+"/a", false)
	require.NoError(t, err)
	assert.Equal(t, int32(1), st.Version, "nothing of the failed multi applied")
}

func multiRead(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	_, err := c.Create(ctx, root, []byte("v"), client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	res, err := c.MultiRead(ctx,
		client.Op{Type: wire.OpGetData, Path: root},
		client.Op{Type: wire.OpGetChildren, Path: root + "/missing"},
		client.Op{Type: wire.OpGetChildren, Path: root},
	)
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Equal(t, []byte("v"), res[0].Data)
	assert.Equal(t, wire.ErrNoNode, res[1].Err)
	assert.Empty(t, res[2].Children)
}

func persistentWatches(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	_, err := c.Create(ctx, root, nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	require.NoError(t, c.AddWatch(ctx, root, wire.AddWatchPersistentRecursive))
	_, err = c.Create(ctx, root+"/a", nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	_, err = c.SetData(ctx, root+"/a", []byte("1"), -1)
	require.NoError(t, err)
	_, err = c.SetData(ctx, root+"/a", []byte("2"), -1)
	require.NoError(t, err)
	want := []wire.EventType{wire.EventNodeCreated, wire.EventNodeDataChanged, wire.EventNodeDataChanged}
	var got []wire.EventType
	for range want {
		ev, err := c.NextEvent(ctx)
		require.NoError(t, err)
		assert.Equal(t, root+"/a", ev.Path)
		got = append(got, ev.Type)
	}
	assert.Equal(t, want, got, "recursive watches stay and never send NodeChildrenChanged")
}

func removeWatches(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	_, err := c.Create(ctx, root, nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	assert.Equal(t, wire.ErrNoWatcher, c.RemoveWatches(ctx, root, wire.WatcherData))
	_, _, err = c.GetData(ctx, root, true)
	require.NoError(t, err)
	require.NoError(t, c.CheckWatches(ctx, root, wire.WatcherData))
	require.NoError(t, c.RemoveWatches(ctx, root, wire.WatcherData))
	assert.Equal(t, wire.ErrNoWatcher, c.CheckWatches(ctx, root, wire.WatcherData))
	// The server sends no DataWatchRemoved (client libraries make it up) and
	// the removed watch no longer fires: the next event is the one below.
	_, err = c.SetData(ctx, root, []byte("x"), -1)
	require.NoError(t, err)
	_, err = c.Exists(ctx, root, true)
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, root, -1))
	ev, err := c.NextEvent(ctx)
	require.NoError(t, err)
	assert.Equal(t, wire.EventNodeDeleted, ev.Type)
}

func ephemeralsAndCounts(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	other := Dial(t, ctx, addr)
	_, err := c.Create(ctx, root, nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	_, err = c.Create(ctx, root+"/mine", nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)
	_, err = other.Create(ctx, root+"/theirs", nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)
	_, err = c.Create(ctx, root+"/p", nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)
	_, err = c.Create(ctx, root+"/p/q", nil, client.OpenACL, wire.ModePersistent)
	require.NoError(t, err)

	eph, err := c.GetEphemerals(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, []string{root + "/mine"}, eph, "only the caller's own")
	n, err := c.GetAllChildrenNumber(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, int32(4), n)
	_, err = c.Create(ctx, root+"/mine/x", nil, client.OpenACL, wire.ModePersistent)
	assert.Equal(t, wire.ErrNoChildrenForEphemerals, err)
}

func authAndWhoAmI(t *testing.T, ctx context.Context, addr, root string) {
	c := Dial(t, ctx, addr)
	ids, err := c.WhoAmI(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ip", ids[0].AuthScheme)
	require.NoError(t, c.AddAuth(ctx, "digest", []byte("alice:secret")))
	ids, err = c.WhoAmI(ctx)
	require.NoError(t, err)
	assert.Contains(t, ids, wire.ClientInfo{AuthScheme: "digest", User: "alice"})

	authACL := []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "auth"}}}
	_, err = c.Create(ctx, root, []byte("secret"), authACL, wire.ModePersistent)
	require.NoError(t, err)
	stranger := Dial(t, ctx, addr)
	_, _, err = stranger.GetData(ctx, root, false)
	assert.Equal(t, wire.ErrNoAuth, err)
	_, err = stranger.Create(ctx, root+"/x", nil, client.OpenACL, wire.ModePersistent)
	assert.Equal(t, wire.ErrNoAuth, err)
	_, err = stranger.Create(ctx, root+"/x", nil, authACL, wire.ModePersistent)
	assert.Equal(t, wire.ErrInvalidACL, err, "an auth ACL without authenticated ids is invalid, checked before the parent's ACL")
	data, _, err := c.GetData(ctx, root, false)
	require.NoError(t, err)
	assert.Equal(t, []byte("secret"), data)
}

// resumeSessionAndSetWatches2 drops a connection, changes the watched node
// meanwhile, resumes the session and re-registers the watch with
// setWatches2: the missed change fires at once.
func resumeSessionAndSetWatches2(t *testing.T, ctx context.Context, addr, root string) {
	c, err := client.Dial(ctx, addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	_, err = c.Create(ctx, root, nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)
	_, _, err = c.GetData(ctx, root, true)
	require.NoError(t, err)
	sess := c.Session()
	require.NoError(t, c.Close())

	writer := Dial(t, ctx, addr)
	_, err = writer.SetData(ctx, root, []byte("changed"), -1)
	require.NoError(t, err)

	resumed, err := client.Dial(ctx, addr, sess)
	require.NoError(t, err)
	t.Cleanup(func() { resumed.CloseSession(context.Background()) })
	assert.Equal(t, sess.ID, resumed.SessionID())
	require.NoError(t, resumed.SetWatches(ctx, wire.SetWatchesRequest{
		RelativeZxid: sess.LastZxid, DataWatches: []string{root}, Persistent: true,
		ExistWatches: []string{}, ChildWatches: []string{}, PersistentWatches: []string{}, PersistentRecursiveWatches: []string{},
	}))
	ev, err := resumed.NextEvent(ctx)
	require.NoError(t, err)
	assert.Equal(t, wire.EventNodeDataChanged, ev.Type)
	eph, err := resumed.GetEphemerals(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, []string{root}, eph, "the ephemeral still belongs to the resumed session")

	_, err = client.Dial(ctx, addr, client.Session{ID: sess.ID, Passwd: make([]byte, 16), Timeout: 10 * time.Second})
	assert.Equal(t, wire.ErrSessionExpired, err, "a wrong password is refused")
}

func closeSession(t *testing.T, ctx context.Context, addr, root string) {
	watcher := Dial(t, ctx, addr)
	c, err := client.Dial(ctx, addr, client.Session{Timeout: 10 * time.Second})
	require.NoError(t, err)
	_, err = c.Create(ctx, root, nil, client.OpenACL, wire.ModeEphemeral)
	require.NoError(t, err)
	_, err = watcher.Exists(ctx, root, true)
	require.NoError(t, err)
	require.NoError(t, c.CloseSession(ctx))
	ev, err := watcher.NextEvent(ctx)
	require.NoError(t, err)
	assert.Equal(t, wire.EventNodeDeleted, ev.Type)
}
