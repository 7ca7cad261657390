package datatools

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/zabd/zabd/datatree"
	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/storage"
	"github.com/zabd/zabd/zab/storage/vfs"
)

// superAuth reads every node whatever its ACL.
var superAuth = []wire.Id{{Scheme: "super"}}

// loadSnapshot reads and checks a snapshot file (its checksum, header,
// sessions, tree and digest section) and returns it with its tree.
func loadSnapshot(path string) (storage.SnapshotInfo, *datatree.Tree, error) {
	var tree *datatree.Tree
	info, err := storage.ReadSnapshotFile(vfs.OS{}, path, func(d *wire.Decoder, zxid int64) (err error) {
		tree, err = datatree.Load(datatree.Config{ExtendedTypesEnabled: true}, d, zxid)
		return err
	})
	return info, tree, err
}

// NodeLine is one znode as snap dump prints it.
type NodeLine struct {
	Path string    `json:"path"`
	Stat wire.Stat `json:"stat"`
	ACL  []string  `json:"acl"`
	Data string    `json:"data"`
}

// SnapDump is `zabctl snap dump FILE`: the header (zxid), the sessions,
// every node (path, stat, ACL, data) in path order, and the digest.
func SnapDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snap dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("o", "text", "output: text or json")
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: zabctl snap dump [-o json] FILE"); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 || (*format != "text" && *format != "json") {
		fs.Usage()
		return 2
	}
	info, tree, err := loadSnapshot(fs.Arg(0))
	if err != nil {
		return fail(stderr, "%v", err)
	}
	nodes := walk(tree)
	if *format == "json" {
		out := map[string]any{"file": info.Name, "zxid": zxidString(info.Zxid), "sessions": sessionsJSON(info.Sessions),
			"nodes": nodes, "treeDigest": tree.Digest()}
		if info.Digest != nil {
			out["digest"] = map[string]any{"zxid": zxidString(info.Digest.Zxid), "version": info.Digest.Version, "digest": info.Digest.Digest}
		}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return fail(stderr, "%v", err)
		}
		return 0
	}
	fmt.Fprintf(stdout, "snapshot %s: zxid %s (epoch %d), %d sessions, %d nodes\n", info.Name, zxidString(info.Zxid), epochOf(info.Zxid), len(info.Sessions), len(nodes))
	fmt.Fprintln(stdout, "sessions:")
	for _, s := range info.Sessions {
		fmt.Fprintf(stdout, "  %s timeout=%dms\n", wire.SessionString(s.ID), s.Timeout)
	}
	fmt.Fprintln(stdout, "nodes:")
	for _, n := range nodes {
		st := n.Stat
		fmt.Fprintf(stdout, "  %s czxid=%s mzxid=%s pzxid=%s version=%d cversion=%d aversion=%d owner=%s children=%d acl=%v data=%s\n",
			n.Path, zxidString(st.Czxid), zxidString(st.Mzxid), zxidString(st.Pzxid), st.Version, st.Cversion, st.Aversion,
			wire.SessionString(st.EphemeralOwner), st.NumChildren, n.ACL, n.Data)
	}
	fmt.Fprintln(stdout, digestLine(info, tree))
	return 0
}

func sessionsJSON(ss []storage.Session) []map[string]any {
	out := []map[string]any{}
	for _, s := range ss {
		out = append(out, map[string]any{"id": wire.SessionString(s.ID), "timeoutMs": s.Timeout})
	}
	return out
}

// walk lists the tree's nodes depth first in path order.
func walk(tree *datatree.Tree) []NodeLine {
	var out []NodeLine
	var visit func(path string)
	visit = func(path string) {
		data, stat, code := tree.GetData(path, superAuth, false, 0)
		if code != wire.ErrOK {
			return
		}
		acl, _, _ := tree.GetACL(path, superAuth)
		var acls []string
		for _, a := range acl {
			acls = append(acls, a.ID.Scheme+":"+a.ID.ID+":"+wire.PermString(a.Perms))
		}
		out = append(out, NodeLine{Path: path, Stat: stat, ACL: acls, Data: fmt.Sprintf("%q", data)})
		children, _, _ := tree.GetChildren(path, superAuth, false, 0)
		slices.Sort(children)
		for _, c := range children {
			if path == "/" {
				visit("/" + c)
			} else {
				visit(path + "/" + c)
			}
		}
	}
	visit("/")
	return out
}

// digestLine compares the digest the file carries with the digest of the
// tree it holds. They agree when the tree was quiet while the snapshot was
// taken; a fuzzy snapshot's digest holds once the log after it is replayed.
func digestLine(info storage.SnapshotInfo, tree *datatree.Tree) string {
	if info.Digest == nil {
		return fmt.Sprintf("digest: none in the file; the tree's is %d", tree.Digest())
	}
	d := info.Digest
	verdict := "matches the tree"
	if d.Digest != tree.Digest() {
		verdict = fmt.Sprintf("differs from the tree's %d", tree.Digest())
		if d.Zxid != info.Zxid {
			verdict += " (a fuzzy snapshot: its digest holds at " + zxidString(d.Zxid) + ", after replaying the log)"
		}
	}
	return fmt.Sprintf("digest: %d (version %d) at zxid %s, %s", d.Digest, d.Version, zxidString(d.Zxid), verdict)
}

// SnapDigest is `zabctl snap digest FILE`: the digest the file carries and
// the one recomputed from its tree. Exit 1 when they differ at the same
// zxid (corruption), 0 otherwise.
func SnapDigest(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: zabctl snap digest FILE")
		return 2
	}
	info, tree, err := loadSnapshot(args[0])
	if err != nil {
		return fail(stderr, "%v", err)
	}
	fmt.Fprintln(stdout, digestLine(info, tree))
	if info.Digest != nil && info.Digest.Zxid == info.Zxid && info.Digest.Digest != tree.Digest() {
		return 1
	}
	return 0
}
