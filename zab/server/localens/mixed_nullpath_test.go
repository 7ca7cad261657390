package localens_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// TestMixedNullPathMulti: a multi with a null path (jute length -1) in an
// op, sent to every member of a zabd-led ensemble with a ZooKeeper
// follower (ddZ). A zabd member answers it itself as a standalone
// ZooKeeper 3.8 does: MarshallingError, an empty multi response, no txn.
// The ZooKeeper follower forwards it; the zabd leader logs an error txn of
// MarshallingError for it, which the follower answers (without the multi
// response) and goes on serving the session. Under a ZooKeeper leader the
// multi is never answered and the session stalls (docs/compatibility.md,
// point 17), which is not tested here.
func TestMixedNullPathMulti(t *testing.T) {
	skipUnlessLong(t)
	m := startMixed(t, "ddZ", 0, nil)
	leader := m.leadBy(zabdKind)
	null := &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpCheck, Body: &wire.PathVersionRequest{Version: -1}, NullPath: true}}}
	for id := int64(1); id <= 3; id++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := client.Dial(ctx, m.Member(id).ClientAddr, client.Session{Timeout: 4 * time.Second})
		require.NoError(t, err, "server %d", id)
		r, err := c.Do(ctx, wire.OpMulti, null)
		require.NoError(t, err, "server %d (%s)", id, kindName(m.kind(id)))
		require.Equal(t, wire.ErrMarshallingError, r.Header.Err, "server %d (%s)", id, kindName(m.kind(id)))
		after, err := c.Do(ctx, wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/after-null-%d", id), ACL: client.OpenACL})
		require.NoError(t, err, "server %d (%s)", id, kindName(m.kind(id)))
		require.Equal(t, wire.ErrOK, after.Header.Err)
		if m.kind(id) == zabdKind {
			require.Equal(t, wire.Marshal(&wire.MultiResponse{}), r.Body, "server %d (leader %t)", id, id == leader)
			require.Equal(t, r.Header.Zxid+1, after.Header.Zxid, "server %d: the multi took no txn", id)
		} else {
			require.Empty(t, r.Body, "server %d: the error txn's answer", id)
		}
		// Closed now, so that no expiry lands between the next member's
		// multi and create.
		_, err = c.Do(ctx, wire.OpCloseSession, &wire.Empty{})
		require.NoError(t, err)
		c.Close() // closed by the server already
		cancel()
	}
}
