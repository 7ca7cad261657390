package server

import (
	"testing"

	"github.com/zabd/zabd/wire/client/clienttest"
)

// TestWireClientScenarios runs the scenarios that pass against Debian's
// ZooKeeper 3.8 (wire/client's tests) against zabd.
func TestWireClientScenarios(t *testing.T) {
	ts := startServer(t, nil)
	clienttest.Run(t, ts.addr)
}
