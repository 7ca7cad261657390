package client_test

import (
	"testing"

	"github.com/zabd/zabd/wire/client/clienttest"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// TestAgainstZooKeeper runs the client's scenarios against Debian's
// ZooKeeper 3.8, which makes them a statement of ZooKeeper's behaviour.
func TestAgainstZooKeeper(t *testing.T) {
	zk := zkprocess.ForTest(t, nil)
	clienttest.Run(t, zk.Addr)
}
