package datatree

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabd/zabd/wire"
)

// TestFuzzySnapshotReplay takes a snapshot step by step while random writes
// keep being applied between the steps, then restores it and replays every
// txn after the snapshot's zxid: the result must be the live tree, node for
// node and digest for digest.
func TestFuzzySnapshotReplay(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := Config{ExtendedTypesEnabled: true}
		live := New(cfg)
		zxid, now := int64(0), int64(1_000)
		var log []Txn
		write := func() {
			zxid++
			now += 7
			txn := live.Prepare(genWrite(rt), zxid, now)
			live.Apply(&txn, nil)
			log = append(log, txn)
		}
		for i, n := 0, rapid.IntRange(0, 60).Draw(rt, "before"); i < n; i++ {
			write()
		}
		snap := live.StartSnapshot()
		var enc wire.Encoder
		for !snap.Step(&enc, rapid.IntRange(1, 3).Draw(rt, "step")) {
			for i, n := 0, rapid.IntRange(0, 4).Draw(rt, "between"); i < n; i++ {
				write()
			}
		}
		for i, n := 0, rapid.IntRange(0, 5).Draw(rt, "after"); i < n; i++ {
			write()
		}
		d := wire.NewDecoder(enc.Bytes())
		restored, err := Load(cfg, d, snap.Zxid())
		require.NoError(rt, err)
		require.Zero(rt, d.Remaining(), "bytes after the snapshot's end marker")
		for i := range log {
			if log[i].Header.Zxid > snap.Zxid() {
				restored.Apply(&log[i], nil)
			}
		}
		require.Equal(rt, live.Digest(), restored.Digest())
		require.Equal(rt, walkedDataSize(live), restored.ApproximateDataSize(), "approximate_data_size after load and replay")
		requireSameTree(rt, live, restored)
		require.Equal(rt, live.Sessions(), restored.Sessions())
		for _, s := range live.Sessions() {
			require.Equal(rt, live.Ephemerals(s), restored.Ephemerals(s))
		}
	})
}

// TestSnapshotRoundTrip writes a quiet tree and loads it back unchanged.
func TestSnapshotRoundTrip(t *testing.T) {
	h := newHarness(t, Config{ExtendedTypesEnabled: true})
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	h.create(11, "/a/e", "eph", wire.ModeEphemeral)
	h.create(11, "/c", "", wire.ModeContainer)
	h.write(&Request{Op: wire.OpSetACL, Body: &wire.SetACLRequest{Path: "/a/b", ACL: wire.ReadACLUnsafe, Version: -1}})
	var enc wire.Encoder
	h.tree.WriteSnapshot(&enc)
	got, err := Load(Config{ExtendedTypesEnabled: true}, wire.NewDecoder(enc.Bytes()), h.tree.LastZxid())
	require.NoError(t, err)
	requireSameTree(t, h.tree, got)
	require.Equal(t, h.tree.Digest(), got.Digest())
	require.Equal(t, []string{"/a/e"}, got.Ephemerals(11))
	require.Equal(t, h.tree.LastZxid(), got.LastZxid())
	// Writing the loaded tree gives the same bytes.
	var again wire.Encoder
	got.WriteSnapshot(&again)
	require.Equal(t, enc.Bytes(), again.Bytes())
}

// TestSnapshotLoadRejectsDamage cuts and corrupts a snapshot: every prefix
// is refused with an offset inside it, never a half-loaded tree.
func TestSnapshotLoadRejectsDamage(t *testing.T) {
	h := newHarness(t, Config{})
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	var enc wire.Encoder
	h.tree.WriteSnapshot(&enc)
	full := enc.Bytes()
	for n := 0; n < len(full); n++ {
		tr, err := Load(Config{}, wire.NewDecoder(full[:n]), 0)
		require.Nil(t, tr, "prefix %d", n)
		var se *SnapshotError
		require.True(t, errors.As(err, &se), "prefix %d: %v", n, err)
		require.True(t, errors.Is(err, ErrCorrupt))
		require.LessOrEqual(t, se.Offset, n)
	}
	// A node whose parent is missing.
	var e wire.Encoder
	e.WriteInt(0)
	e.WriteString("")
	e.WriteBuffer(nil)
	e.WriteLong(-1)
	(&wire.StatPersisted{}).Encode(&e)
	at := e.Len()
	e.WriteString("/x/y")
	e.WriteBuffer(nil)
	e.WriteLong(-1)
	(&wire.StatPersisted{}).Encode(&e)
	e.WriteString("/")
	_, err := Load(Config{}, wire.NewDecoder(e.Bytes()), 0)
	var se *SnapshotError
	require.True(t, errors.As(err, &se))
	require.Equal(t, at, se.Offset)
}
