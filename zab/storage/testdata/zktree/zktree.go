// Package zktree reads a datatree the way scripts/lib/zktree.py reads a
// ZooKeeper server through kazoo: every node with its data and stat, keyed
// by path, in the expected.json format. mkdata writes a tree's nodes with it
// for scripts/interop.sh to compare with what Debian's ZooKeeper serves, and
// zab/storage's TestReadZooKeeper38DataDir compares a recovered tree with the
// expected.json ZooKeeper served. It lives under testdata, with mkdata, so
// that `go build ./...` leaves it alone.
package zktree

import (
	"fmt"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
)

// Node is one node of an expected.json.
type Node struct {
	Data        string `json:"data"`
	Czxid       int64  `json:"czxid"`
	Mzxid       int64  `json:"mzxid"`
	Pzxid       int64  `json:"pzxid"`
	Ctime       int64  `json:"ctime"`
	Mtime       int64  `json:"mtime"`
	Version     int32  `json:"version"`
	Cversion    int32  `json:"cversion"`
	Aversion    int32  `json:"aversion"`
	Ephemeral   int64  `json:"ephemeralOwner"`
	NumChildren int32  `json:"numChildren"`
	DataLength  int32  `json:"dataLength"`
}

// Read returns every node of tree that a client authenticated as auth can
// read, from / down, keyed by path. A node it may not read is an error.
func Read(tree *datatree.Tree, auth []wire.Id) (map[string]Node, error) {
	nodes := map[string]Node{}
	var walk func(path string) error
	walk = func(path string) error {
		data, st, code := tree.GetData(path, auth, false, 0)
		if code != wire.ErrOK {
			return fmt.Errorf("getData %s: %v", path, code)
		}
		nodes[path] = Node{Data: string(data), Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid, Ctime: st.Ctime, Mtime: st.Mtime,
			Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion, Ephemeral: st.EphemeralOwner,
			NumChildren: st.NumChildren, DataLength: st.DataLength}
		children, _, code := tree.GetChildren(path, auth, false, 0)
		if code != wire.ErrOK {
			return fmt.Errorf("getChildren %s: %v", path, code)
		}
		for _, c := range children {
			child := path + "/" + c
			if path == "/" {
				child = "/" + c
			}
			if err := walk(child); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("/"); err != nil {
		return nil, err
	}
	return nodes, nil
}
