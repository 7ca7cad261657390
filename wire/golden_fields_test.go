package wire

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected values below are what the capture drivers did (paths, data,
// flags, versions, ACLs) plus what the server chose in that recording
// (session ids, zxids, times, passwords). Re-recording changes the latter;
// update them from the new vectors.

const (
	sessionGozk  int64 = 0x01000009664d0000 // first session of the recording
	sessionJava  int64 = sessionGozk + 1
	sessionKazoo int64 = sessionGozk + 3
	recorded     int64 = 1795260018000 // ms; times below are offsets from it
)

var (
	openACL = []ACL{{Perms: PermAll, ID: Id{Scheme: "world", ID: "anyone"}}}
	// Stats of /golden/gozk as it changed during the recording.
	gozkStat = Stat{Czxid: 3, Mzxid: 3, Ctime: recorded + 408, Mtime: recorded + 408,
		Cversion: 3, DataLength: 5, NumChildren: 3, Pzxid: 6}
	gozkStatSet = Stat{Czxid: 3, Mzxid: 7, Ctime: recorded + 408, Mtime: recorded + 432, Version: 1,
		Cversion: 3, DataLength: 5, NumChildren: 3, Pzxid: 6}
)

func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b := make([]byte, len(s)/2)
	for i := range b {
		var v byte
		for _, c := range []byte(s[2*i : 2*i+2]) {
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | (c - '0')
			default:
				v = v<<4 | (c - 'a' + 10)
			}
		}
		b[i] = v
	}
	return b
}

// goldenFields maps a vector's name to the records it must decode to.
func goldenFields(t *testing.T) map[string][]Record {
	return map[string][]Record{
		// Connect: go-zookeeper sends no read-only byte and gets none back;
		// the Java client and kazoo send it and get it.
		"gozk-1/connect-request#1": {&ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)}},
		"gozk-1/connect-response#1": {&ConnectResponse{TimeOut: 4000, SessionID: sessionGozk,
			Passwd: hexBytes(t, "a958c45082c7a2e12f8a66a19b58c593")}},
		"java-1/connect-request#1": {&ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16), HasReadOnly: true}},
		"java-1/connect-response#1": {&ConnectResponse{TimeOut: 4000, SessionID: sessionJava,
			Passwd: hexBytes(t, "bc79be502213822624cdcdcc6fe1d960"), HasReadOnly: true}},
		"gozk-2/connect-request#1": {&ConnectRequest{LastZxidSeen: 12, TimeOut: 4000, SessionID: sessionGozk,
			Passwd: hexBytes(t, "a958c45082c7a2e12f8a66a19b58c593")}},
		"kazoo-1/connect-response#1": {&ConnectResponse{TimeOut: 4000, SessionID: sessionKazoo,
			Passwd: hexBytes(t, "9637ca50e27bc39c3a47ff75c8cfb0c6"), HasReadOnly: true}},

		// go-zookeeper's session.
		"gozk-1/request/create#1": {&RequestHeader{Xid: 1, Type: OpCreate},
			&CreateRequest{Path: "/golden", Data: []byte("root"), ACL: openACL, Flags: ModePersistent}},
		"gozk-1/reply/create#1": {&ReplyHeader{Xid: 1, Zxid: 2}, &PathResponse{Path: "/golden"}},
		"gozk-1/request/create#3": {&RequestHeader{Xid: 3, Type: OpCreate},
			&CreateRequest{Path: "/golden/gozk/seq-", Data: []byte("s"), ACL: openACL, Flags: ModeEphemeralSequential}},
		"gozk-1/reply/create#3": {&ReplyHeader{Xid: 3, Zxid: 4}, &PathResponse{Path: "/golden/gozk/seq-0000000000"}},
		"gozk-1/request/createContainer#1": {&RequestHeader{Xid: 4, Type: OpCreateContainer},
			&CreateRequest{Path: "/golden/gozk/container", Data: []byte("c"), ACL: openACL, Flags: ModeContainer}},
		"gozk-1/reply/createContainer#1": {&ReplyHeader{Xid: 4, Zxid: 5}, &Create2Response{Path: "/golden/gozk/container",
			Stat: Stat{Czxid: 5, Mzxid: 5, Ctime: recorded + 414, Mtime: recorded + 414, DataLength: 1, Pzxid: 5}}},
		"gozk-1/request/createTTL#1": {&RequestHeader{Xid: 5, Type: OpCreateTTL},
			&CreateRequest{Path: "/golden/gozk/ttl", Data: []byte("t"), ACL: openACL, Flags: ModePersistentWithTTL,
				TTL: 60000, HasTTL: true}},
		"gozk-1/reply/createTTL#1": {&ReplyHeader{Xid: 5, Zxid: 6}, &Create2Response{Path: "/golden/gozk/ttl",
			Stat: Stat{Czxid: 6, Mzxid: 6, Ctime: recorded + 418, Mtime: recorded + 418, DataLength: 1, Pzxid: 6}}},
		"gozk-1/request/exists#1": {&RequestHeader{Xid: 6, Type: OpExists}, &PathWatchRequest{Path: "/golden/gozk"}},
		"gozk-1/reply/exists#1":   {&ReplyHeader{Xid: 6, Zxid: 6}, &StatResponse{Stat: gozkStat}},
		"gozk-1/request/exists#2": {&RequestHeader{Xid: 7, Type: OpExists},
			&PathWatchRequest{Path: "/golden/gozk/later", Watch: true}},
		"gozk-1/error-reply/exists#1": {&ReplyHeader{Xid: 7, Zxid: 6, Err: ErrNoNode}},
		"gozk-1/request/getData#1": {&RequestHeader{Xid: 8, Type: OpGetData},
			&PathWatchRequest{Path: "/golden/gozk", Watch: true}},
		"gozk-1/reply/getData#1": {&ReplyHeader{Xid: 8, Zxid: 6}, &GetDataResponse{Data: []byte("hello"), Stat: gozkStat}},
		"gozk-1/request/setData#1": {&RequestHeader{Xid: 9, Type: OpSetData},
			&SetDataRequest{Path: "/golden/gozk", Data: []byte("world"), Version: 0}},
		// The watch event arrives before the reply of the setData that fired it.
		"gozk-1/notification#1": {&ReplyHeader{Xid: XidNotification, Zxid: -1},
			&WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/golden/gozk"}},
		"gozk-1/reply/setData#1":        {&ReplyHeader{Xid: 9, Zxid: 7}, &StatResponse{Stat: gozkStatSet}},
		"gozk-1/request/getChildren2#1": {&RequestHeader{Xid: 10, Type: OpGetChildren2}, &PathWatchRequest{Path: "/golden/gozk"}},
		"gozk-1/reply/getChildren2#1": {&ReplyHeader{Xid: 10, Zxid: 7}, &GetChildren2Response{
			Children: []string{"container", "ttl", "seq-0000000000"}, Stat: gozkStatSet}},
		"gozk-1/request/getACL#1": {&RequestHeader{Xid: 11, Type: OpGetACL}, &PathRequest{Path: "/golden/gozk"}},
		"gozk-1/reply/getACL#1":   {&ReplyHeader{Xid: 11, Zxid: 7}, &GetACLResponse{ACL: openACL, Stat: gozkStatSet}},
		"gozk-1/request/setACL#1": {&RequestHeader{Xid: 12, Type: OpSetACL}, &SetACLRequest{Path: "/golden/gozk",
			ACL: []ACL{openACL[0], {Perms: PermRead, ID: Id{Scheme: "ip", ID: "127.0.0.1"}}}, Version: 0}},
		"gozk-1/reply/setACL#1": {&ReplyHeader{Xid: 12, Zxid: 8}, &StatResponse{Stat: Stat{Czxid: 3, Mzxid: 7,
			Ctime: recorded + 408, Mtime: recorded + 432, Version: 1, Cversion: 3, Aversion: 1, DataLength: 5,
			NumChildren: 3, Pzxid: 6}}},
		"gozk-1/request/sync#1": {&RequestHeader{Xid: 13, Type: OpSync}, &PathRequest{Path: "/golden/gozk"}},
		"gozk-1/reply/sync#1":   {&ReplyHeader{Xid: 13, Zxid: 8}, &PathResponse{Path: "/golden/gozk"}},
		"gozk-1/request/multi#1": {&RequestHeader{Xid: 14, Type: OpMulti}, &MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Body: &CreateRequest{Path: "/golden/gozk/m1", Data: []byte("m"), ACL: openACL}},
			{Type: OpSetData, Body: &SetDataRequest{Path: "/golden/gozk", Data: []byte("multi"), Version: -1}},
			{Type: OpCheck, Body: &PathVersionRequest{Path: "/golden/gozk/m1", Version: 0}},
			{Type: OpDelete, Body: &PathVersionRequest{Path: "/golden/gozk/m1", Version: -1}},
		}}},
		"gozk-1/reply/multi#1": {&ReplyHeader{Xid: 14, Zxid: 9}, &MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Body: &PathResponse{Path: "/golden/gozk/m1"}},
			{Type: OpSetData, Body: &StatResponse{Stat: Stat{Czxid: 3, Mzxid: 9, Ctime: recorded + 408,
				Mtime: recorded + 445, Version: 2, Cversion: 4, Aversion: 1, DataLength: 5, NumChildren: 4, Pzxid: 9}}},
			{Type: OpCheck},
			{Type: OpDelete},
		}}},
		// A failed multi: err 0 in the reply header; per op an error result,
		// 0 before the failing op, its code, RuntimeInconsistency after.
		"gozk-1/reply/multi#2": {&ReplyHeader{Xid: 15, Zxid: 10}, &MultiResponse{Results: []MultiResult{
			{Type: OpError, Err: ErrOK, Body: &ErrorResponse{Err: ErrOK}},
			{Type: OpError, Err: ErrBadVersion, Body: &ErrorResponse{Err: ErrBadVersion}},
			{Type: OpError, Err: ErrRuntimeInconsistency, Body: &ErrorResponse{Err: ErrRuntimeInconsistency}},
		}}},
		"gozk-1/request/delete#1": {&RequestHeader{Xid: 16, Type: OpDelete},
			&PathVersionRequest{Path: "/golden/gozk/ttl", Version: -1}},
		"gozk-1/reply/delete#1": {&ReplyHeader{Xid: 16, Zxid: 11}, &Empty{}},
		// An incremental reconfig: newMembers is jute's null string, not "".
		"gozk-1/request/reconfig#1": {&RequestHeader{Xid: 18, Type: OpReconfig},
			&ReconfigRequest{JoiningServers: "server.2=127.0.0.1:2888:3888;2181", NewMembersNull: true, CurConfigID: -1}},
		"gozk-1/error-reply/reconfig#1": {&ReplyHeader{Xid: 18, Zxid: 12, Err: ErrReconfigDisabled}},
		// go-zookeeper numbers its auth packets like any request.
		"gozk-1/request/auth#1": {&RequestHeader{Xid: 19, Type: OpAuth},
			&AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")}},
		"gozk-1/reply/auth#1": {&ReplyHeader{Xid: 19}, &Empty{}},
		"gozk-2/request/setWatches#1": {&RequestHeader{Xid: 22, Type: OpSetWatches}, &SetWatchesRequest{
			RelativeZxid: 12, DataWatches: []string{"/golden/gozk"}, ExistWatches: []string{"/golden/gozk/later"},
			ChildWatches: []string{"/golden/gozk"}}},
		"gozk-2/reply/setWatches#1":     {&ReplyHeader{Xid: 22, Zxid: 12}, &Empty{}},
		"gozk-2/request/ping#1":         {&RequestHeader{Xid: XidPing, Type: OpPing}, &Empty{}},
		"gozk-2/reply/ping#1":           {&ReplyHeader{Xid: XidPing, Zxid: 12}, &Empty{}},
		"gozk-2/request/closeSession#1": {&RequestHeader{Xid: 24, Type: OpCloseSession}, &Empty{}},
		"gozk-2/reply/closeSession#1":   {&ReplyHeader{Xid: 24, Zxid: 13}, &Empty{}},

		// The Java client's session.
		"java-1/request/create2#1": {&RequestHeader{Xid: 1, Type: OpCreate2},
			&CreateRequest{Path: "/golden/java", Data: []byte("j"), ACL: openACL}},
		"java-1/reply/create2#1": {&ReplyHeader{Xid: 1, Zxid: 15}, &Create2Response{Path: "/golden/java",
			Stat: Stat{Czxid: 15, Mzxid: 15, Ctime: recorded + 5733, Mtime: recorded + 5733, DataLength: 1, Pzxid: 15}}},
		// A create2 op inside a multi is answered like create: path only.
		"java-1/request/multi#1": {&RequestHeader{Xid: 6, Type: OpMulti}, &MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Body: &CreateRequest{Path: "/golden/java/m-create", Data: []byte("1"), ACL: openACL}},
			{Type: OpCreate2, Body: &CreateRequest{Path: "/golden/java/m-create2", Data: []byte("2"), ACL: openACL}},
			{Type: OpSetData, Body: &SetDataRequest{Path: "/golden/java", Data: []byte("multi"), Version: -1}},
		}}},
		"java-1/reply/multi#1": {&ReplyHeader{Xid: 6, Zxid: 20}, &MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Body: &PathResponse{Path: "/golden/java/m-create"}},
			{Type: OpCreate, Body: &PathResponse{Path: "/golden/java/m-create2"}},
			{Type: OpSetData, Body: &StatResponse{Stat: Stat{Czxid: 15, Mzxid: 20, Ctime: recorded + 5733,
				Mtime: recorded + 5746, Version: 1, Cversion: 6, DataLength: 5, NumChildren: 6, Pzxid: 20}}},
		}}},
		// createTTL and createContainer ops are answered like create2.
		"java-1/request/multi#2": {&RequestHeader{Xid: 7, Type: OpMulti}, &MultiRequest{Ops: []MultiOp{
			{Type: OpCreateTTL, Body: &CreateRequest{Path: "/golden/java/m-ttl", Data: []byte("3"), ACL: openACL,
				Flags: ModePersistentWithTTL, TTL: 60000, HasTTL: true}},
			{Type: OpCreateContainer, Body: &CreateRequest{Path: "/golden/java/m-container", Data: []byte("4"),
				ACL: openACL, Flags: ModeContainer}},
			{Type: OpCheck, Body: &PathVersionRequest{Path: "/golden/java/m-create", Version: 0}},
			{Type: OpDelete, Body: &PathVersionRequest{Path: "/golden/java/m-create", Version: -1}},
		}}},
		"java-1/reply/multi#2": {&ReplyHeader{Xid: 7, Zxid: 21}, &MultiResponse{Results: []MultiResult{
			{Type: OpCreate2, Body: &Create2Response{Path: "/golden/java/m-ttl", Stat: Stat{Czxid: 21, Mzxid: 21,
				Ctime: recorded + 5751, Mtime: recorded + 5751, DataLength: 1, Pzxid: 21}}},
			{Type: OpCreate2, Body: &Create2Response{Path: "/golden/java/m-container", Stat: Stat{Czxid: 21,
				Mzxid: 21, Ctime: recorded + 5751, Mtime: recorded + 5751, DataLength: 1, Pzxid: 21}}},
			{Type: OpCheck},
			{Type: OpDelete},
		}}},
		"java-1/request/multiRead#1": {&RequestHeader{Xid: 8, Type: OpMultiRead}, &MultiRequest{Ops: []MultiOp{
			{Type: OpGetData, Body: &PathWatchRequest{Path: "/golden/java"}},
			{Type: OpGetChildren, Body: &PathWatchRequest{Path: "/golden/java/container"}},
			{Type: OpGetData, Body: &PathWatchRequest{Path: "/golden/java/missing"}},
		}}},
		"java-1/reply/multiRead#1": {&ReplyHeader{Xid: 8, Zxid: 21}, &MultiResponse{Results: []MultiResult{
			{Type: OpGetData, Body: &GetDataResponse{Data: []byte("multi"), Stat: Stat{Czxid: 15, Mzxid: 20,
				Ctime: recorded + 5733, Mtime: recorded + 5746, Version: 1, Cversion: 9, DataLength: 5,
				NumChildren: 7, Pzxid: 21}}},
			{Type: OpGetChildren, Body: &StringsResponse{Strings: []string{}}},
			{Type: OpError, Err: ErrNoNode, Body: &ErrorResponse{Err: ErrNoNode}},
		}}},
		"java-1/request/getEphemerals#1": {&RequestHeader{Xid: 9, Type: OpGetEphemerals}, &PathRequest{Path: "/golden/java"}},
		"java-1/reply/getEphemerals#1": {&ReplyHeader{Xid: 9, Zxid: 21},
			&StringsResponse{Strings: []string{"/golden/java/eph"}}},
		"java-1/request/getAllChildrenNumber#1": {&RequestHeader{Xid: 10, Type: OpGetAllChildrenNumber},
			&PathRequest{Path: "/golden/java"}},
		"java-1/reply/getAllChildrenNumber#1": {&ReplyHeader{Xid: 10, Zxid: 21}, &IntResponse{Value: 7}},
		"java-1/request/whoAmI#1":             {&RequestHeader{Xid: 11, Type: OpWhoAmI}, &Empty{}},
		"java-1/reply/whoAmI#1": {&ReplyHeader{Xid: 11, Zxid: 21},
			&WhoAmIResponse{ClientInfo: []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}}},
		// The Java client sends auth with xid -4.
		"java-1/request/auth#1": {&RequestHeader{Xid: XidAuth, Type: OpAuth},
			&AuthPacket{Scheme: "digest", Auth: []byte("carol:secret")}},
		"java-1/reply/auth#1": {&ReplyHeader{Xid: XidAuth}, &Empty{}},
		"java-1/reply/whoAmI#2": {&ReplyHeader{Xid: 12, Zxid: 21}, &WhoAmIResponse{ClientInfo: []ClientInfo{
			{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "carol"}}}},
		"java-1/request/checkWatches#1": {&RequestHeader{Xid: 14, Type: OpCheckWatches},
			&PathTypeRequest{Path: "/golden/java/container", Type: WatcherData}},
		"java-1/reply/checkWatches#1": {&ReplyHeader{Xid: 14, Zxid: 21}, &Empty{}},
		"java-1/request/getChildren#1": {&RequestHeader{Xid: 15, Type: OpGetChildren},
			&PathWatchRequest{Path: "/golden/java/container", Watch: true}},
		"java-1/reply/getChildren#1": {&ReplyHeader{Xid: 15, Zxid: 21}, &StringsResponse{Strings: []string{}}},
		"java-1/request/removeWatches#1": {&RequestHeader{Xid: 16, Type: OpRemoveWatches},
			&PathTypeRequest{Path: "/golden/java/container", Type: WatcherChildren}},
		"java-1/reply/removeWatches#1": {&ReplyHeader{Xid: 16, Zxid: 21}, &Empty{}},
		"java-1/request/deleteContainer#1": {&RequestHeader{Xid: 18, Type: OpDeleteContainer},
			&RawPathRequest{Path: "/golden/java/container"}},
		"java-1/error-reply/deleteContainer#1": {&ReplyHeader{Xid: 18, Zxid: 22, Err: ErrBadArguments}},
		"java-1/request/addWatch#1": {&RequestHeader{Xid: 19, Type: OpAddWatch},
			&AddWatchRequest{Path: "/golden/java", Mode: AddWatchPersistentRecursive}},
		"java-1/reply/addWatch#1": {&ReplyHeader{Xid: 19, Zxid: 22}, &ErrorResponse{Err: ErrOK}},
		"java-1/notification#1": {&ReplyHeader{Xid: XidNotification, Zxid: -1}, &WatcherEvent{
			Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/golden/java/seq-0000000003"}},
		// The Java client re-registers persistent watches with setWatches2. It
		// builds the header with xid -8 but numbers it like any request on send.
		"java-2/request/setWatches2#1": {&RequestHeader{Xid: 24, Type: OpSetWatches2},
			&SetWatchesRequest{RelativeZxid: 23, DataWatches: []string{}, ExistWatches: []string{"/golden/java/later"},
				ChildWatches: []string{}, PersistentWatches: []string{"/golden/java/seq-0000000003"},
				PersistentRecursiveWatches: []string{"/golden/java"}, Persistent: true}},
		"java-2/reply/setWatches2#1": {&ReplyHeader{Xid: 24, Zxid: 23}, &Empty{}},

		// SASL (DIGEST-MD5) from the Java client with a JAAS login.
		"sasl-1/request/sasl#1": {&RequestHeader{Xid: 1, Type: OpSASL}, &SASLRequest{Token: []byte{}}},
		"sasl-1/reply/whoAmI#1": {&ReplyHeader{Xid: 3, Zxid: 25}, &WhoAmIResponse{ClientInfo: []ClientInfo{
			{AuthScheme: "sasl", User: "bob"}, {AuthScheme: "ip", User: "127.0.0.1"}}}},

		// kazoo and zkCli.
		"kazoo-1/notification#1": {&ReplyHeader{Xid: XidNotification, Zxid: -1},
			&WatcherEvent{Type: EventNodeDataChanged, State: StateSyncConnected, Path: "/golden/kazoo"}},
		"zkcli-addWatch-1/request/addWatch#1": {&RequestHeader{Xid: 1, Type: OpAddWatch},
			&AddWatchRequest{Path: "/golden/zkcli", Mode: AddWatchPersistent}},
		"zkcli-whoami-1/reply/whoAmI#1": {&ReplyHeader{Xid: 1, Zxid: 38},
			&WhoAmIResponse{ClientInfo: []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}}},
		"zkcli-removewatches-1/error-reply/removeWatches#1": {&ReplyHeader{Xid: 1, Zxid: 39, Err: ErrNoWatcher}},
	}
}

// TestGoldenFieldValues checks decoded field values against what the
// capture did, and that encoding those freshly built records gives the
// captured bytes.
func TestGoldenFieldValues(t *testing.T) {
	byName := map[string]goldenVector{}
	for _, v := range loadManifest(t, goldenDir) {
		byName[v.Name] = v
	}
	for name, want := range goldenFields(t) {
		v, ok := byName[name]
		if !ok {
			t.Errorf("%s: not in the manifest", name)
			continue
		}
		b := vectorBytes(t, goldenDir, v)
		got, err := decodeFrameVector(v.Kind, b)
		if assert.NoError(t, err, name) && assert.Equal(t, want, got, name) {
			assert.Equal(t, b, encodeRecords(want), "%s: encoding the expected records", name)
		}
	}
}

// goldenTxns lists txn log entries by offset with the values they must
// decode to.
func goldenTxns() map[int64]TxnEntry {
	sub := func(r Record) []byte { return Marshal(r) }
	digest := func(d int64) *TxnDigest { return &TxnDigest{Version: 2, TreeDigest: d} }
	return map[int64]TxnEntry{
		16: {Header: TxnHeader{ClientID: sessionGozk, Zxid: 1, Time: recorded + 372, Type: OpCreateSession},
			Body: &CreateSessionTxn{TimeOut: 4000}, Digest: digest(1371985504)},
		77: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 1, Zxid: 2, Time: recorded + 396, Type: OpCreate},
			Body:   &CreateTxn{Path: "/golden", Data: []byte("root"), ACL: openACL, ParentCVersion: 1},
			Digest: digest(4413139170)},
		299: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 3, Zxid: 4, Time: recorded + 411, Type: OpCreate},
			Body: &CreateTxn{Path: "/golden/gozk/seq-0000000000", Data: []byte("s"), ACL: openACL, Ephemeral: true,
				ParentCVersion: 1}, Digest: digest(9560182656)},
		424: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 4, Zxid: 5, Time: recorded + 414, Type: OpCreateContainer},
			Body: &CreateContainerTxn{Path: "/golden/gozk/container", Data: []byte("c"), ACL: openACL,
				ParentCVersion: 2}, Digest: digest(9856023057)},
		543: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 5, Zxid: 6, Time: recorded + 418, Type: OpCreateTTL},
			Body: &CreateTTLTxn{Path: "/golden/gozk/ttl", Data: []byte("t"), ACL: openACL, ParentCVersion: 3,
				TTL: 60000}, Digest: digest(10851249107)},
		664: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 9, Zxid: 7, Time: recorded + 432, Type: OpSetData},
			Body:   &SetDataTxn{Path: "/golden/gozk", Data: []byte("world"), Version: 1},
			Digest: digest(12498774175)},
		750: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 12, Zxid: 8, Time: recorded + 439, Type: OpSetACL},
			Body: &SetACLTxn{Path: "/golden/gozk", ACL: []ACL{openACL[0],
				{Perms: PermRead, ID: Id{Scheme: "ip", ID: "127.0.0.1"}}}, Version: 1},
			Digest: digest(12844080226)},
		// A multi's sub-txns: check records the version the node has.
		877: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 14, Zxid: 9, Time: recorded + 445, Type: OpMulti},
			Body: &MultiTxn{Txns: []Txn{
				{Type: OpCreate, Data: sub(&CreateTxn{Path: "/golden/gozk/m1", Data: []byte("m"), ACL: openACL,
					ParentCVersion: 4})},
				{Type: OpSetData, Data: sub(&SetDataTxn{Path: "/golden/gozk", Data: []byte("multi"), Version: 2})},
				{Type: OpCheck, Data: sub(&CheckVersionTxn{Path: "/golden/gozk/m1", Version: 1})},
				{Type: OpDelete, Data: sub(&DeleteTxn{Path: "/golden/gozk/m1"})},
			}}, Digest: digest(13803900242)},
		// A failed multi is logged with error sub-txns; the tree is unchanged.
		1097: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 15, Zxid: 10, Time: recorded + 452, Type: OpMulti},
			Body: &MultiTxn{Txns: []Txn{
				{Type: OpCreate, Data: sub(&CreateTxn{Path: "/golden/gozk/m2", Data: []byte("m"), ACL: openACL,
					ParentCVersion: 5})},
				{Type: OpError, Data: sub(&ErrorTxn{Err: ErrBadVersion})},
				{Type: OpError, Data: sub(&ErrorTxn{Err: ErrRuntimeInconsistency})},
			}}, Digest: digest(13803900242)},
		1246: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 16, Zxid: 11, Time: recorded + 455, Type: OpDelete},
			Body: &DeleteTxn{Path: "/golden/gozk/ttl"}, Digest: digest(7387994620)},
		// Error txns carry no digest.
		1323: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 18, Zxid: 12, Time: recorded + 458, Type: OpError},
			Body: &ErrorTxn{Err: ErrReconfigDisabled}},
		1372: {Header: TxnHeader{ClientID: sessionGozk, Cxid: 24, Zxid: 13, Time: recorded + 3470, Type: OpCloseSession},
			Body:   &CloseSessionTxn{Paths2Delete: []string{"/golden/gozk/seq-0000000000"}},
			Digest: digest(9205221040)},
		1525: {Header: TxnHeader{ClientID: sessionJava, Cxid: 1, Zxid: 15, Time: recorded + 5733, Type: OpCreate2},
			Body:   &CreateTxn{Path: "/golden/java", Data: []byte("j"), ACL: openACL, ParentCVersion: 2},
			Digest: digest(9467996443)},
		2353: {Header: TxnHeader{ClientID: sessionJava, Cxid: 7, Zxid: 21, Time: recorded + 5751, Type: OpMulti},
			Body: &MultiTxn{Txns: []Txn{
				{Type: OpCreateTTL, Data: sub(&CreateTTLTxn{Path: "/golden/java/m-ttl", Data: []byte("3"),
					ACL: openACL, ParentCVersion: 7, TTL: 60000})},
				{Type: OpCreateContainer, Data: sub(&CreateContainerTxn{Path: "/golden/java/m-container",
					Data: []byte("4"), ACL: openACL, ParentCVersion: 8})},
				{Type: OpCheck, Data: sub(&CheckVersionTxn{Path: "/golden/java/m-create", Version: 1})},
				{Type: OpDelete, Data: sub(&DeleteTxn{Path: "/golden/java/m-create"})},
			}}, Digest: digest(28512231272)},
		2924: {Header: TxnHeader{ClientID: sessionGozk + 2, Cxid: 4, Zxid: 26, Time: recorded + 9864, Type: OpCloseSession},
			Body: &CloseSessionTxn{Paths2Delete: []string{}}, Digest: digest(26485830090)},
	}
}

func TestGoldenTxnFieldValues(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, "txnlog.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for off, want := range goldenTxns() {
		entry, end := txnEntryAt(t, raw, off)
		got, err := DecodeTxnEntry(entry)
		if assert.NoError(t, err, "entry at %d", off) && assert.Equal(t, want, got, "entry at %d", off) {
			assert.Equal(t, raw[off:end], AppendTxnLogEntry(nil, &want), "encoding the entry at %d", off)
		}
	}
}

// txnEntryAt returns the bytes of the txn log entry at off (without its
// checksum, length and end marker) and the offset where it ends.
func txnEntryAt(t *testing.T, raw []byte, off int64) ([]byte, int64) {
	t.Helper()
	d := NewDecoder(raw[off:])
	d.ReadLong()
	entry := d.ReadBuffer()
	if d.Err() != nil {
		t.Fatalf("entry at %d: %v", off, d.Err())
	}
	return entry, off + int64(d.Offset()) + 1
}
