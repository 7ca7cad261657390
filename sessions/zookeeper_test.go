package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/sessions"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// TestPasswordsOfRealZooKeeperSessions opens sessions on Debian's
// ZooKeeper 3.8 and checks that the passwords it hands out are the ones
// computed here, and that its standalone ids carry server id 1.
func TestPasswordsOfRealZooKeeperSessions(t *testing.T) {
	zk := zkprocess.ForTest(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		c, err := client.Dial(ctx, zk.Addr, client.Session{Timeout: 10 * time.Second})
		require.NoError(t, err)
		id := c.SessionID()
		require.Equal(t, sessions.Passwords{}.For(id), c.Passwd(), "session 0x%x", id)
		require.Equal(t, int64(1), id>>56, "standalone ZooKeeper mints ids with server id 1")
		require.NoError(t, c.Close())
	}
}
