package election

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zabd/zabd/wire"
)

// The election traffic of a real two-server ZooKeeper 3.8.0 ensemble,
// recorded through a proxy on server 1's election port (wire's capture.sh
// peer). Server 2 connected, so "out" is what 2 sent to 1 and "in" what 1
// sent to 2. Both started empty (zxid 0, epoch 0).
const goldenPeerDir = "../wire/testdata/golden/peer"

type goldenVector struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	File   string `json:"file"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

// goldenNotifications returns the recorded notifications of one stream
// file, in order, each as its raw message (without the length prefix).
func goldenNotifications(t *testing.T, file string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenPeerDir, "manifest.json"))
	require.NoError(t, err)
	var vectors []goldenVector
	require.NoError(t, json.Unmarshal(raw, &vectors))
	stream, err := os.ReadFile(filepath.Join(goldenPeerDir, file))
	require.NoError(t, err)
	var out [][]byte
	for _, v := range vectors {
		if v.File != file || v.Kind != "election/notification" {
			continue
		}
		frame := stream[v.Offset : v.Offset+v.Length]
		require.Equal(t, uint32(len(frame)-4), binary.BigEndian.Uint32(frame), "%s: length prefix", v.Name)
		out = append(out, frame[4:])
	}
	return out
}

func decodeNotification(t *testing.T, b []byte) wire.Notification {
	t.Helper()
	var n wire.Notification
	d := wire.NewDecoder(b)
	n.Decode(d)
	require.NoError(t, d.Err())
	return n
}

func encodeNotification(n wire.Notification) []byte {
	e := wire.NewEncoder(nil)
	n.Encode(e)
	return e.Bytes()
}

// Playing server 1 against what ZooKeeper's server 2 sent, our server 1
// sends ZooKeeper's server 1's notifications byte for byte: its own vote,
// then server 2's vote adopted. Then both sides decide as ZooKeeper did —
// with ZooKeeper's fixed final wait after finalizeWait, with the adaptive
// one at once (both voters have voted for 2: nothing better can come). The
// bytes are the same under both rules.
func TestGoldenTwoServerElection(t *testing.T) {
	fromOne := goldenNotifications(t, "election-to1-1.in.bin")
	fromTwo := goldenNotifications(t, "election-to1-1.out.bin")
	require.Len(t, fromOne, 2)
	require.Len(t, fromTwo, 1)
	config := decodeNotification(t, fromOne[0]).Config

	eachFinalWaitRule(t, func(t *testing.T, rule finalWaitRule) {
		wait := time.Duration(0)
		if rule.fixed {
			wait = DefaultFinalizeWait
		}
		one := mustNew(t, Config{ID: 1, Voters: []int64{1, 2}, QuorumConfig: config, FixedFinalizeWait: rule.fixed})
		one.Start(0, 0, 0)
		rd := one.Ready()
		require.Len(t, rd.Messages, 1)
		require.Equal(t, int64(2), rd.Messages[0].To)
		require.Equal(t, fromOne[0], encodeNotification(rd.Messages[0].Notification), "server 1's own vote")

		one.Step(time.Millisecond, 2, decodeNotification(t, fromTwo[0]))
		rd = one.Ready()
		require.Len(t, rd.Messages, 1)
		require.Equal(t, fromOne[1], encodeNotification(rd.Messages[0].Notification), "server 2's vote, adopted")
		if rule.fixed {
			require.Nil(t, rd.Decision)
			one.Tick(time.Millisecond + wait)
			rd = one.Ready()
		}
		require.Equal(t, &Decision{State: wire.PeerFollowing, Vote: Vote{Leader: 2, ElectionEpoch: 1}}, rd.Decision)

		// Server 2, fed what server 1 sent, decides to lead, and its first
		// notification is the one ZooKeeper's server 2 sent.
		// (Each server sends its own config text: the capture's proxies gave
		// them different addresses for each other.)
		two := mustNew(t, Config{ID: 2, Voters: []int64{1, 2}, QuorumConfig: decodeNotification(t, fromTwo[0]).Config, FixedFinalizeWait: rule.fixed})
		two.Start(0, 0, 0)
		require.Equal(t, fromTwo[0], encodeNotification(two.Ready().Messages[0].Notification))
		for _, b := range fromOne {
			two.Step(time.Millisecond, 1, decodeNotification(t, b))
		}
		two.Tick(time.Millisecond + wait)
		require.Equal(t, wire.PeerLeading, two.State())
		require.Empty(t, two.Ready().Messages, "server 1 ended LOOKING voting for 2: nothing to tell it")
	})
}
