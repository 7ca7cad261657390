package wire

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each constant type prints its ZooKeeper name and falls back to
// Type(number) for values ZooKeeper does not define.
func TestConstantNames(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{OpCreate.String(), "create"}, {OpCreate2.String(), "create2"}, {OpCreateTTL.String(), "createTTL"},
		{OpCreateContainer.String(), "createContainer"}, {OpDeleteContainer.String(), "deleteContainer"},
		{OpDelete.String(), "delete"}, {OpExists.String(), "exists"}, {OpGetData.String(), "getData"},
		{OpSetData.String(), "setData"}, {OpGetACL.String(), "getACL"}, {OpSetACL.String(), "setACL"},
		{OpGetChildren.String(), "getChildren"}, {OpGetChildren2.String(), "getChildren2"},
		{OpSync.String(), "sync"}, {OpPing.String(), "ping"}, {OpCheck.String(), "check"},
		{OpMulti.String(), "multi"}, {OpMultiRead.String(), "multiRead"}, {OpReconfig.String(), "reconfig"},
		{OpCheckWatches.String(), "checkWatches"}, {OpRemoveWatches.String(), "removeWatches"},
		{OpAuth.String(), "auth"}, {OpSetWatches.String(), "setWatches"}, {OpSetWatches2.String(), "setWatches2"},
		{OpSASL.String(), "sasl"}, {OpGetEphemerals.String(), "getEphemerals"},
		{OpGetAllChildrenNumber.String(), "getAllChildrenNumber"}, {OpAddWatch.String(), "addWatch"},
		{OpWhoAmI.String(), "whoAmI"}, {OpCreateSession.String(), "createSession"},
		{OpCloseSession.String(), "closeSession"}, {OpError.String(), "error"},
		{OpNotification.String(), "notification"}, {OpCode(10).String(), "OpCode(10)"},

		{ErrOK.String(), "ok"}, {ErrNoNode.String(), "NoNode"}, {ErrBadVersion.String(), "BadVersion"},
		{ErrSessionClosedRequireSASL.String(), "SessionClosedRequireSaslAuth"},
		{ErrThrottled.String(), "Throttled"}, {ErrCode(-9).String(), "ErrCode(-9)"},
		{ErrNoAuth.Error(), "zookeeper: NoAuth"},

		{EventNone.String(), "None"}, {EventNodeCreated.String(), "NodeCreated"},
		{EventNodeDeleted.String(), "NodeDeleted"}, {EventNodeDataChanged.String(), "NodeDataChanged"},
		{EventNodeChildrenChanged.String(), "NodeChildrenChanged"},
		{EventDataWatchRemoved.String(), "DataWatchRemoved"}, {EventChildWatchRemoved.String(), "ChildWatchRemoved"},
		{EventPersistentWatchRemoved.String(), "PersistentWatchRemoved"}, {EventType(0).String(), "EventType(0)"},

		{StateDisconnected.String(), "Disconnected"}, {StateSyncConnected.String(), "SyncConnected"},
		{StateAuthFailed.String(), "AuthFailed"}, {StateConnectedReadOnly.String(), "ConnectedReadOnly"},
		{StateSaslAuthenticated.String(), "SaslAuthenticated"}, {StateClosed.String(), "Closed"},
		{StateExpired.String(), "Expired"}, {KeeperState(1).String(), "KeeperState(1)"},

		{ModePersistent.String(), "persistent"}, {ModeEphemeral.String(), "ephemeral"},
		{ModePersistentSequential.String(), "persistent_sequential"},
		{ModeEphemeralSequential.String(), "ephemeral_sequential"}, {ModeContainer.String(), "container"},
		{ModePersistentWithTTL.String(), "persistent_with_ttl"},
		{ModePersistentSequentialWithTTL.String(), "persistent_sequential_with_ttl"},
		{CreateMode(7).String(), "CreateMode(7)"},

		{AddWatchPersistent.String(), "PERSISTENT"}, {AddWatchPersistentRecursive.String(), "PERSISTENT_RECURSIVE"},
		{AddWatchMode(2).String(), "AddWatchMode(2)"},

		{WatcherChildren.String(), "Children"}, {WatcherData.String(), "Data"}, {WatcherAny.String(), "Any"},
		{WatcherType(0).String(), "WatcherType(0)"},

		{PacketRequest.String(), "REQUEST"}, {PacketProposal.String(), "PROPOSAL"}, {PacketAck.String(), "ACK"},
		{PacketCommit.String(), "COMMIT"}, {PacketPing.String(), "PING"}, {PacketRevalidate.String(), "REVALIDATE"},
		{PacketSync.String(), "SYNC"}, {PacketInform.String(), "INFORM"},
		{PacketCommitAndActivate.String(), "COMMITANDACTIVATE"}, {PacketNewLeader.String(), "NEWLEADER"},
		{PacketFollowerInfo.String(), "FOLLOWERINFO"}, {PacketUpToDate.String(), "UPTODATE"},
		{PacketDiff.String(), "DIFF"}, {PacketTrunc.String(), "TRUNC"}, {PacketSnap.String(), "SNAP"},
		{PacketObserverInfo.String(), "OBSERVERINFO"}, {PacketLeaderInfo.String(), "LEADERINFO"},
		{PacketAckEpoch.String(), "ACKEPOCH"}, {PacketInformAndActivate.String(), "INFORMANDACTIVATE"},
		{PacketType(0).String(), "PacketType(0)"},

		{PeerLooking.String(), "LOOKING"}, {PeerFollowing.String(), "FOLLOWING"}, {PeerLeading.String(), "LEADING"},
		{PeerObserving.String(), "OBSERVING"}, {PeerState(4).String(), "PeerState(4)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.got)
	}
}

// Every named opcode and error code parses back from its name, and the name
// tables hold no duplicates (a duplicate would make parsing ambiguous).
func TestParseNames(t *testing.T) {
	for op, name := range opNames {
		got, ok := ParseOpCode(name)
		assert.True(t, ok, name)
		assert.Equal(t, op, got, name)
		assert.True(t, op.Known(), name)
	}
	for c, name := range errNames {
		got, ok := ParseErrCode(name)
		assert.True(t, ok, name)
		assert.Equal(t, c, got, name)
	}
	_, ok := ParseOpCode("nope")
	assert.False(t, ok)
	assert.False(t, OpCode(10).Known())
	assert.Len(t, opNames, 33)
	assert.Len(t, errNames, 32)
}

func TestCreateModePredicates(t *testing.T) {
	for m := CreateMode(-1); m <= 7; m++ {
		got := fmt.Sprint(m.Valid(), m.Ephemeral(), m.Sequential(), m.TTL(), m.Container())
		want := map[CreateMode]string{
			ModePersistent:                  "true false false false false",
			ModeEphemeral:                   "true true false false false",
			ModePersistentSequential:        "true false true false false",
			ModeEphemeralSequential:         "true true true false false",
			ModeContainer:                   "true false false false true",
			ModePersistentWithTTL:           "true false false true false",
			ModePersistentSequentialWithTTL: "true false true true false",
		}[m]
		if want == "" {
			want = "false false false false false"
		}
		assert.Equal(t, want, got, "%s: valid/ephemeral/sequential/ttl/container", m)
	}
}
