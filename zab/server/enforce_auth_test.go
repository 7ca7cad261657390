package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// TestEnforceAuthMatchesZooKeeper runs Debian's ZooKeeper 3.8 and zabd with
// enforce.auth.enabled and enforce.auth.schemes=digest and compares what a
// client sees: a request before any addauth gets SessionClosedRequireSaslAuth
// with zxid 0 and the connection closes; after addauth digest, requests are
// served; a failed addauth closes the connection as always.
func TestEnforceAuthMatchesZooKeeper(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zk := zkprocess.ForTest(t, map[string]string{"enforce.auth.enabled": "true", "enforce.auth.schemes": "digest"})
	cfg := testConfig(t.TempDir())
	cfg.EnforceAuthSchemes = []string{"digest"}
	zabd := startServer(t, cfg)

	transcript := func(addr string) string {
		var out string
		step := func(what string, c *client.Conn, op wire.OpCode, req wire.Record) {
			r, err := c.Do(ctx, op, req)
			if err != nil {
				out += fmt.Sprintf("%s: no reply (%v)\n", what, err != nil)
				return
			}
			out += fmt.Sprintf("%s: xid=%d zxid=%d err=%s\n", what, r.Header.Xid, r.Header.Zxid, r.Header.Err)
		}
		closed := func(what string, c *client.Conn) {
			select {
			case <-c.Done():
				out += what + ": closed\n"
			case <-time.After(10 * time.Second):
				out += what + ": still open\n"
			}
		}
		c, err := client.Dial(ctx, addr, client.Session{Timeout: 30 * time.Second})
		require.NoError(t, err)
		step("getData before addauth", c, wire.OpGetData, &wire.PathWatchRequest{Path: "/"})
		closed("the connection", c)
		c.Close()

		c, err = client.Dial(ctx, addr, client.Session{Timeout: 30 * time.Second})
		require.NoError(t, err)
		defer c.Close()
		step("addauth digest", c, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")})
		step("getData after addauth", c, wire.OpGetData, &wire.PathWatchRequest{Path: "/"})
		step("create after addauth", c, wire.OpCreate, &wire.CreateRequest{Path: "/enforced", Data: []byte("x"), ACL: wire.OpenACLUnsafe})
		return out
	}
	want := transcript(zk.Addr)
	require.Contains(t, want, "getData before addauth: xid=1 zxid=0 err=zookeeper: SessionClosedRequireSaslAuth\nthe connection: closed")
	require.Equal(t, want, transcript(zabd.addr))
}
