package zab_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/zabtest"
)

// whoAmIAuths are addauth sequences whose identities ZooKeeper lists in an
// order other than the order they were added (its connection keeps them in
// a hash set), or with a repeat it lists once.
var whoAmIAuths = [][]string{
	{"alice:secret"},
	{"dave:p", "alice:p"},
	{"w:p", "x:p", "w:p"},
}

// TestWhoAmIMatchesZooKeeper runs the addauth sequences above on Debian's
// ZooKeeper 3.8 and on a Peer and compares the whoAmI answers.
func TestWhoAmIMatchesZooKeeper(t *testing.T) {
	zk := startZooKeeper(t)
	for _, auths := range whoAmIAuths {
		c := zk.session()
		for _, a := range auths {
			r, err := c.Do(zk.ctx, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte(a)})
			require.NoError(t, err)
			require.Equal(t, wire.ErrOK, r.Header.Err)
		}
		r, err := c.Do(zk.ctx, wire.OpWhoAmI, &wire.Empty{})
		require.NoError(t, err)
		var want wire.WhoAmIResponse
		require.NoError(t, r.Decode(&want))

		h := newHarness(t)
		p := h.Session(10000)
		for _, a := range auths {
			p.AddAuth("digest", a)
		}
		p.Send(wire.OpWhoAmI, &wire.Empty{})
		msgs := h.Effects[len(h.Effects)-1:]
		require.Equal(t, zab.Reply, msgs[0].Kind, zabtest.Format(&msgs[0]))
		require.Equal(t, &want, msgs[0].Body, "auths %v", auths)
	}
}
