package wire

import (
	"bytes"
	"reflect"
	"sort"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Generators of random records. Slices are sometimes nil (jute's null) and
// sometimes empty, since the codec keeps the two apart.

func genBytes() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		if rapid.IntRange(0, 4).Draw(t, "nullBytes") == 0 {
			return nil
		}
		return rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "bytes")
	})
}

// genString draws strings of the Basic Multilingual Plane: a character
// beyond it does not survive jute's Java codec (TestJavaStringCodec).
func genString() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom(nil, bmp), 0, 24, -1)
}

var bmp = &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: 0xd7ff, Stride: 1}, {Lo: 0xe000, Hi: 0xffff, Stride: 1}}}

func genStrings() *rapid.Generator[[]string] {
	return rapid.Custom(func(t *rapid.T) []string {
		if rapid.IntRange(0, 4).Draw(t, "nullStrings") == 0 {
			return nil
		}
		return rapid.SliceOfN(genString(), 0, 5).Draw(t, "strings")
	})
}

func genID() *rapid.Generator[Id] {
	return rapid.Custom(func(t *rapid.T) Id {
		return Id{Scheme: genString().Draw(t, "scheme"), ID: genString().Draw(t, "id")}
	})
}

func genACLs() *rapid.Generator[[]ACL] {
	return rapid.Custom(func(t *rapid.T) []ACL {
		if rapid.IntRange(0, 4).Draw(t, "nullACL") == 0 {
			return nil
		}
		return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) ACL {
			return ACL{Perms: rapid.Int32().Draw(t, "perms"), ID: genID().Draw(t, "aclID")}
		}), 0, 4).Draw(t, "acl")
	})
}

func genStat() *rapid.Generator[Stat] {
	return rapid.Custom(func(t *rapid.T) Stat {
		i64, i32 := rapid.Int64(), rapid.Int32()
		return Stat{Czxid: i64.Draw(t, "czxid"), Mzxid: i64.Draw(t, "mzxid"), Ctime: i64.Draw(t, "ctime"),
			Mtime: i64.Draw(t, "mtime"), Version: i32.Draw(t, "version"), Cversion: i32.Draw(t, "cversion"),
			Aversion: i32.Draw(t, "aversion"), EphemeralOwner: i64.Draw(t, "owner"),
			DataLength: i32.Draw(t, "dataLength"), NumChildren: i32.Draw(t, "numChildren"), Pzxid: i64.Draw(t, "pzxid")}
	})
}

func genOp() *rapid.Generator[OpCode] {
	return rapid.Custom(func(t *rapid.T) OpCode { return OpCode(rapid.Int32().Draw(t, "op")) })
}
func genErr() *rapid.Generator[ErrCode] {
	return rapid.Custom(func(t *rapid.T) ErrCode { return ErrCode(rapid.Int32().Draw(t, "err")) })
}

// multiOpTypes and multiResultTypes are the types a multi may hold.
var (
	multiOpTypes = []OpCode{OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData,
		OpCheck, OpGetChildren, OpGetData}
	multiResultTypes = []OpCode{OpCreate, OpCreate2, OpDelete, OpCheck, OpSetData, OpGetChildren, OpGetData, OpError}
)

// genRecords lists a generator for every record type of the package. The
// generated values are those the codec can represent: fields that a
// configuration flag leaves off the wire (TTL without HasTTL, the persistent
// lists without Persistent, ReadOnly without HasReadOnly) stay zero.
func genRecords() map[string]*rapid.Generator[Record] {
	i32, i64, b := rapid.Int32(), rapid.Int64(), rapid.Bool()
	rec := func(f func(t *rapid.T) Record) *rapid.Generator[Record] { return rapid.Custom(f) }
	createRequest := func(t *rapid.T, hasTTL bool) *CreateRequest {
		r := &CreateRequest{Path: genString().Draw(t, "path"), Data: genBytes().Draw(t, "data"),
			ACL: genACLs().Draw(t, "acl"), Flags: CreateMode(i32.Draw(t, "flags")), HasTTL: hasTTL}
		if hasTTL {
			r.TTL = i64.Draw(t, "ttl")
		}
		return r
	}
	multiOpBody := func(t *rapid.T, op OpCode) Record {
		switch op {
		case OpCreate, OpCreate2, OpCreateContainer:
			return createRequest(t, false)
		case OpCreateTTL:
			return createRequest(t, true)
		case OpDelete, OpCheck:
			return &PathVersionRequest{Path: genString().Draw(t, "path"), Version: i32.Draw(t, "version")}
		case OpSetData:
			return &SetDataRequest{Path: genString().Draw(t, "path"), Data: genBytes().Draw(t, "data"), Version: i32.Draw(t, "version")}
		}
		return &PathWatchRequest{Path: genString().Draw(t, "path"), Watch: b.Draw(t, "watch")}
	}
	multiResultBody := func(t *rapid.T, op OpCode) Record {
		switch op {
		case OpCreate:
			return &PathResponse{Path: genString().Draw(t, "path")}
		case OpCreate2:
			return &Create2Response{Path: genString().Draw(t, "path"), Stat: genStat().Draw(t, "stat")}
		case OpSetData:
			return &StatResponse{Stat: genStat().Draw(t, "stat")}
		case OpGetChildren:
			return &StringsResponse{Strings: genStrings().Draw(t, "children")}
		case OpGetData:
			return &GetDataResponse{Data: genBytes().Draw(t, "data"), Stat: genStat().Draw(t, "stat")}
		case OpError:
			return &ErrorResponse{Err: genErr().Draw(t, "err")}
		}
		return nil
	}
	records := map[string]*rapid.Generator[Record]{
		"Id":  rec(func(t *rapid.T) Record { id := genID().Draw(t, "id"); return &id }),
		"ACL": rec(func(t *rapid.T) Record { return &ACL{Perms: i32.Draw(t, "perms"), ID: genID().Draw(t, "id")} }),
		"Stat": rec(func(t *rapid.T) Record {
			s := genStat().Draw(t, "stat")
			return &s
		}),
		"StatPersisted": rec(func(t *rapid.T) Record {
			return &StatPersisted{Czxid: i64.Draw(t, "a"), Mzxid: i64.Draw(t, "b"), Ctime: i64.Draw(t, "c"),
				Mtime: i64.Draw(t, "d"), Version: i32.Draw(t, "e"), Cversion: i32.Draw(t, "f"),
				Aversion: i32.Draw(t, "g"), EphemeralOwner: i64.Draw(t, "h"), Pzxid: i64.Draw(t, "i")}
		}),
		"ClientInfo": rec(func(t *rapid.T) Record {
			return &ClientInfo{AuthScheme: genString().Draw(t, "scheme"), User: genString().Draw(t, "user")}
		}),
		"TxnHeader": rec(func(t *rapid.T) Record {
			return &TxnHeader{ClientID: i64.Draw(t, "client"), Cxid: i32.Draw(t, "cxid"), Zxid: i64.Draw(t, "zxid"),
				Time: i64.Draw(t, "time"), Type: genOp().Draw(t, "type")}
		}),
		"TxnDigest": rec(func(t *rapid.T) Record {
			return &TxnDigest{Version: i32.Draw(t, "v"), TreeDigest: i64.Draw(t, "d")}
		}),
		"CreateTxn": rec(func(t *rapid.T) Record {
			return &CreateTxn{Path: genString().Draw(t, "path"), Data: genBytes().Draw(t, "data"),
				ACL: genACLs().Draw(t, "acl"), Ephemeral: b.Draw(t, "eph"), ParentCVersion: i32.Draw(t, "pcv")}
		}),
		"CreateTTLTxn": rec(func(t *rapid.T) Record {
			return &CreateTTLTxn{Path: genString().Draw(t, "path"), Data: genBytes().Draw(t, "data"),
				ACL: genACLs().Draw(t, "acl"), ParentCVersion: i32.Draw(t, "pcv"), TTL: i64.Draw(t, "ttl")}
		}),
		"CreateContainerTxn": rec(func(t *rapid.T) Record {
			return &CreateContainerTxn{Path: genString().Draw(t, "path"), Data: genBytes().Draw(t, "data"),
				ACL: genACLs().Draw(t, "acl"), ParentCVersion: i32.Draw(t, "pcv")}
		}),
		"DeleteTxn": rec(func(t *rapid.T) Record { return &DeleteTxn{Path: genString().Draw(t, "path")} }),
		"SetDataTxn": rec(func(t *rapid.T) Record {
			return &SetDataTxn{Path: genString().Draw(t, "path"), Data: genBytes().Draw(t, "data"), Version: i32.Draw(t, "v")}
		}),
		"CheckVersionTxn": rec(func(t *rapid.T) Record {
			return &CheckVersionTxn{Path: genString().Draw(t, "path"), Version: i32.Draw(t, "v")}
		}),
		"SetACLTxn": rec(func(t *rapid.T) Record {
			return &SetACLTxn{Path: genString().Draw(t, "path"), ACL: genACLs().Draw(t, "acl"), Version: i32.Draw(t, "v")}
		}),
		"CreateSessionTxn": rec(func(t *rapid.T) Record { return &CreateSessionTxn{TimeOut: i32.Draw(t, "timeout")} }),
		"CloseSessionTxn":  rec(func(t *rapid.T) Record { return &CloseSessionTxn{Paths2Delete: genStrings().Draw(t, "paths")} }),
		"ErrorTxn":         rec(func(t *rapid.T) Record { return &ErrorTxn{Err: genErr().Draw(t, "err")} }),
		"Txn": rec(func(t *rapid.T) Record {
			return &Txn{Type: genOp().Draw(t, "type"), Data: genBytes().Draw(t, "data")}
		}),
		"MultiTxn": rec(func(t *rapid.T) Record {
			if rapid.IntRange(0, 4).Draw(t, "nullTxns") == 0 {
				return &MultiTxn{}
			}
			return &MultiTxn{Txns: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Txn {
				return Txn{Type: genOp().Draw(t, "type"), Data: genBytes().Draw(t, "data")}
			}), 0, 4).Draw(t, "txns")}
		}),
		"FileHeader": rec(func(t *rapid.T) Record {
			return &FileHeader{Magic: i32.Draw(t, "magic"), Version: i32.Draw(t, "version"), DbID: i64.Draw(t, "dbid")}
		}),
		"ConnectRequest": rec(func(t *rapid.T) Record {
			r := &ConnectRequest{ProtocolVersion: i32.Draw(t, "pv"), LastZxidSeen: i64.Draw(t, "zxid"),
				TimeOut: i32.Draw(t, "timeout"), SessionID: i64.Draw(t, "session"), Passwd: genBytes().Draw(t, "passwd"),
				HasReadOnly: b.Draw(t, "hasReadOnly")}
			r.ReadOnly = r.HasReadOnly && b.Draw(t, "readOnly")
			return r
		}),
		"ConnectResponse": rec(func(t *rapid.T) Record {
			r := &ConnectResponse{ProtocolVersion: i32.Draw(t, "pv"), TimeOut: i32.Draw(t, "timeout"),
				SessionID: i64.Draw(t, "session"), Passwd: genBytes().Draw(t, "passwd"), HasReadOnly: b.Draw(t, "hasReadOnly")}
			r.ReadOnly = r.HasReadOnly && b.Draw(t, "readOnly")
			return r
		}),
		"RequestHeader": rec(func(t *rapid.T) Record { return &RequestHeader{Xid: i32.Draw(t, "xid"), Type: genOp().Draw(t, "type")} }),
		"ReplyHeader": rec(func(t *rapid.T) Record {
			return &ReplyHeader{Xid: i32.Draw(t, "xid"), Zxid: i64.Draw(t, "zxid"), Err: genErr().Draw(t, "err")}
		}),
		"MultiHeader": rec(func(t *rapid.T) Record {
			return &MultiHeader{Type: genOp().Draw(t, "type"), Done: b.Draw(t, "done"), Err: genErr().Draw(t, "err")}
		}),
		"AuthPacket": rec(func(t *rapid.T) Record {
			return &AuthPacket{Type: i32.Draw(t, "type"), Scheme: genString().Draw(t, "scheme"), Auth: genBytes().Draw(t, "auth")}
		}),
		"PathRequest": rec(func(t *rapid.T) Record { return &PathRequest{Path: genString().Draw(t, "path")} }),
		"PathWatchRequest": rec(func(t *rapid.T) Record {
			return &PathWatchRequest{Path: genString().Draw(t, "path"), Watch: b.Draw(t, "watch")}
		}),
		"PathVersionRequest": rec(func(t *rapid.T) Record { return multiOpBody(t, OpDelete) }),
		"SetDataRequest":     rec(func(t *rapid.T) Record { return multiOpBody(t, OpSetData) }),
		"CreateRequest":      rec(func(t *rapid.T) Record { return createRequest(t, b.Draw(t, "hasTTL")) }),
		"SetACLRequest": rec(func(t *rapid.T) Record {
			return &SetACLRequest{Path: genString().Draw(t, "path"), ACL: genACLs().Draw(t, "acl"), Version: i32.Draw(t, "v")}
		}),
		"ReconfigRequest": rec(func(t *rapid.T) Record {
			r := &ReconfigRequest{JoiningNull: b.Draw(t, "jn"), LeavingNull: b.Draw(t, "ln"),
				NewMembersNull: b.Draw(t, "nn"), CurConfigID: i64.Draw(t, "config")}
			if !r.JoiningNull {
				r.JoiningServers = genString().Draw(t, "joining")
			}
			if !r.LeavingNull {
				r.LeavingServers = genString().Draw(t, "leaving")
			}
			if !r.NewMembersNull {
				r.NewMembers = genString().Draw(t, "members")
			}
			return r
		}),
		"PathTypeRequest": rec(func(t *rapid.T) Record {
			return &PathTypeRequest{Path: genString().Draw(t, "path"), Type: WatcherType(i32.Draw(t, "type"))}
		}),
		"AddWatchRequest": rec(func(t *rapid.T) Record {
			return &AddWatchRequest{Path: genString().Draw(t, "path"), Mode: AddWatchMode(i32.Draw(t, "mode"))}
		}),
		"SetWatchesRequest": rec(func(t *rapid.T) Record {
			r := &SetWatchesRequest{RelativeZxid: i64.Draw(t, "zxid"), DataWatches: genStrings().Draw(t, "data"),
				ExistWatches: genStrings().Draw(t, "exist"), ChildWatches: genStrings().Draw(t, "child"),
				Persistent: b.Draw(t, "persistent")}
			if r.Persistent {
				r.PersistentWatches = genStrings().Draw(t, "pw")
				r.PersistentRecursiveWatches = genStrings().Draw(t, "prw")
			}
			return r
		}),
		"SASLRequest": rec(func(t *rapid.T) Record { return &SASLRequest{Token: genBytes().Draw(t, "token")} }),
		"WatcherEvent": rec(func(t *rapid.T) Record {
			return &WatcherEvent{Type: EventType(i32.Draw(t, "type")), State: KeeperState(i32.Draw(t, "state")),
				Path: genString().Draw(t, "path")}
		}),
		"ErrorResponse":   rec(func(t *rapid.T) Record { return multiResultBody(t, OpError) }),
		"PathResponse":    rec(func(t *rapid.T) Record { return multiResultBody(t, OpCreate) }),
		"Create2Response": rec(func(t *rapid.T) Record { return multiResultBody(t, OpCreate2) }),
		"StatResponse":    rec(func(t *rapid.T) Record { return multiResultBody(t, OpSetData) }),
		"GetDataResponse": rec(func(t *rapid.T) Record { return multiResultBody(t, OpGetData) }),
		"StringsResponse": rec(func(t *rapid.T) Record { return multiResultBody(t, OpGetChildren) }),
		"GetChildren2Response": rec(func(t *rapid.T) Record {
			return &GetChildren2Response{Children: genStrings().Draw(t, "children"), Stat: genStat().Draw(t, "stat")}
		}),
		"GetACLResponse": rec(func(t *rapid.T) Record {
			return &GetACLResponse{ACL: genACLs().Draw(t, "acl"), Stat: genStat().Draw(t, "stat")}
		}),
		"IntResponse": rec(func(t *rapid.T) Record { return &IntResponse{Value: i32.Draw(t, "value")} }),
		"WhoAmIResponse": rec(func(t *rapid.T) Record {
			if rapid.IntRange(0, 4).Draw(t, "nullInfo") == 0 {
				return &WhoAmIResponse{}
			}
			return &WhoAmIResponse{ClientInfo: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) ClientInfo {
				return ClientInfo{AuthScheme: genString().Draw(t, "scheme"), User: genString().Draw(t, "user")}
			}), 0, 3).Draw(t, "info")}
		}),
		"Empty":          rapid.Just[Record](&Empty{}),
		"RawPathRequest": rec(func(t *rapid.T) Record { return &RawPathRequest{Path: genString().Draw(t, "path")} }),
		"MultiRequest": rec(func(t *rapid.T) Record {
			var r MultiRequest
			for i, n := 0, rapid.IntRange(0, 5).Draw(t, "ops"); i < n; i++ {
				op := rapid.SampledFrom(multiOpTypes).Draw(t, "opType")
				r.Ops = append(r.Ops, MultiOp{Type: op, Body: multiOpBody(t, op)})
			}
			return &r
		}),
		"MultiResponse": rec(func(t *rapid.T) Record {
			var r MultiResponse
			for i, n := 0, rapid.IntRange(0, 5).Draw(t, "results"); i < n; i++ {
				op := rapid.SampledFrom(multiResultTypes).Draw(t, "resultType")
				r.Results = append(r.Results, MultiResult{Type: op, Err: genErr().Draw(t, "err"), Body: multiResultBody(t, op)})
			}
			return &r
		}),
		"QuorumPacket": rec(func(t *rapid.T) Record {
			var ids []Id
			if rapid.IntRange(0, 3).Draw(t, "nullAuth") != 0 {
				ids = rapid.SliceOfN(genID(), 0, 3).Draw(t, "auth")
			}
			return &QuorumPacket{Type: PacketType(i32.Draw(t, "type")), Zxid: i64.Draw(t, "zxid"),
				Data: genBytes().Draw(t, "data"), AuthInfo: ids}
		}),
		"LearnerInfo": rec(func(t *rapid.T) Record {
			return &LearnerInfo{ServerID: i64.Draw(t, "sid"), ProtocolVersion: i32.Draw(t, "pv"), ConfigVersion: i64.Draw(t, "cv")}
		}),
		"QuorumAuthPacket": rec(func(t *rapid.T) Record {
			return &QuorumAuthPacket{Magic: i64.Draw(t, "magic"), Status: i32.Draw(t, "status"), Token: genBytes().Draw(t, "token")}
		}),
		"InitialMessage": rec(func(t *rapid.T) Record {
			return &InitialMessage{
				ProtocolVersion: rapid.SampledFrom([]int64{ElectionProtocolV1, ElectionProtocolV2}).Draw(t, "pv"),
				ServerID:        i64.Draw(t, "sid"), Address: rapid.StringN(1, 64, ElectionMaxAddress).Draw(t, "addr")}
		}),
		"Notification": rec(func(t *rapid.T) Record {
			n := &Notification{State: PeerState(i32.Draw(t, "state")), Leader: i64.Draw(t, "leader"),
				Zxid: i64.Draw(t, "zxid"), ElectionEpoch: i64.Draw(t, "epoch"), PeerEpoch: i64.Draw(t, "peerEpoch"),
				Version: i32.Draw(t, "version")}
			if n.Version > 1 {
				n.Config = rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "config")
			}
			return n
		}),
	}
	addPacketDataGenerators(records)
	return records
}

// freshLike returns an empty record of r's type, configured as r is for
// decoding (the flags that choose a layout rather than carry data).
func freshLike(r Record) Record {
	switch v := r.(type) {
	case *CreateRequest:
		return &CreateRequest{HasTTL: v.HasTTL}
	case *SetWatchesRequest:
		return &SetWatchesRequest{Persistent: v.Persistent}
	}
	return reflect.New(reflect.TypeOf(r).Elem()).Interface().(Record)
}

// TestRecordRoundTrip: for every record type, decode(encode(r)) == r, the
// decoder consumes exactly what the encoder wrote, and re-encoding gives the
// same bytes.
func TestRecordRoundTrip(t *testing.T) {
	for name, gen := range genRecords() {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				r := gen.Draw(t, "record")
				enc := Marshal(r)
				got := freshLike(r)
				require.NoError(t, Unmarshal(enc, got), "decode %x", enc)
				require.Equal(t, r, got)
				require.Equal(t, enc, Marshal(got), "re-encoded")
			})
		})
	}
}

// TestRecordDecodeShortInput: every proper prefix of an encoded record is
// an error, never a panic or a silently shorter record. (Records whose end
// is where the input ends are exempt: they read "the rest".)
func TestRecordDecodeShortInput(t *testing.T) {
	greedy := map[string]bool{"Empty": true, "RawPathRequest": true, "ConnectRequest": true,
		"ConnectResponse": true, "Notification": true, "ForwardedRequest": true, "PingTouches": true,
		"NewLeaderConfig": true, "InformAndActivate": true}
	for name, gen := range genRecords() {
		if greedy[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				r := gen.Draw(t, "record")
				enc := Marshal(r)
				if len(enc) == 0 {
					return
				}
				cut := rapid.IntRange(0, len(enc)-1).Draw(t, "cut")
				require.Error(t, Unmarshal(enc[:cut], freshLike(r)), "%d of %d bytes decoded", cut, len(enc))
			})
		})
	}
}

// txnBodies names the body record of every txn type.
var txnBodies = map[OpCode]string{OpCreate: "CreateTxn", OpCreate2: "CreateTxn", OpCreateTTL: "CreateTTLTxn",
	OpCreateContainer: "CreateContainerTxn", OpDelete: "DeleteTxn", OpDeleteContainer: "DeleteTxn",
	OpSetData: "SetDataTxn", OpReconfig: "SetDataTxn", OpSetACL: "SetACLTxn", OpCheck: "CheckVersionTxn",
	OpCreateSession: "CreateSessionTxn", OpCloseSession: "CloseSessionTxn", OpError: "ErrorTxn",
	OpMulti: "MultiTxn"}

// genTxnEntry draws a txn of any type, with or without a digest, from the
// record generators gens.
func genTxnEntry(gens map[string]*rapid.Generator[Record]) *rapid.Generator[TxnEntry] {
	var types []OpCode
	for op := range txnBodies {
		types = append(types, op)
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	return rapid.Custom(func(t *rapid.T) TxnEntry {
		op := rapid.SampledFrom(types).Draw(t, "type")
		var e TxnEntry
		e.Header = *gens["TxnHeader"].Draw(t, "header").(*TxnHeader)
		e.Header.Type = op
		e.Body = gens[txnBodies[op]].Draw(t, "body")
		if rapid.Bool().Draw(t, "digest") {
			e.Digest = gens["TxnDigest"].Draw(t, "d").(*TxnDigest)
		}
		return e
	})
}

func TestTxnEntryRoundTrip(t *testing.T) {
	entries := genTxnEntry(genRecords())
	rapid.Check(t, func(t *rapid.T) {
		e := entries.Draw(t, "entry")
		logged := AppendTxnLogEntry(nil, &e)
		r, err := NewTxnLogReader(bytes.NewReader(append(Marshal(&FileHeader{Magic: TxnLogMagic, Version: 2}), logged...)), 0)
		require.NoError(t, err)
		got, off, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, int64(FileHeaderSize), off)
		require.Equal(t, e, got)
	})
}
