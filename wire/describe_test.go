package wire

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestDescribe(t *testing.T) {
	stat := Stat{Czxid: 0x100000009, Mzxid: 0x10000000a, Pzxid: 9, Ctime: 1700, Mtime: 1701, Version: 1,
		EphemeralOwner: 0x19b76daa8000000, DataLength: 4}
	for _, c := range []struct {
		rec  Record
		want string
	}{
		{&PathWatchRequest{Path: "/a/x", Watch: true}, "/a/x watch"},
		{&PathVersionRequest{Path: "/a", Version: -1}, "/a version=-1"},
		{&PathRequest{Path: "/a\xff b"}, `"/a\xff b"`},
		{&PathRequest{Path: "/a\ufffd"}, `"/a�"`},
		{&PathRequest{}, `""`},
		{&SetDataRequest{Path: "/a", Data: []byte("c1.5"), Version: 3}, `/a "c1.5" version=3`},
		{&CreateRequest{Path: "/t", Data: []byte(strings.Repeat("x", 60)), ACL: OpenACLUnsafe, Flags: ModePersistentWithTTL, HasTTL: true, TTL: 500},
			`/t "` + strings.Repeat("x", describeDataMax) + `"…(60 bytes) persistent_with_ttl acl=[world:anyone:cdrwa] ttl=500ms`},
		{&SetACLRequest{Path: "/b", ACL: []ACL{{Perms: PermRead | 64, ID: Id{Scheme: "digest", ID: "alice:h="}}}, Version: -1},
			"/b acl=[digest:alice:h=:r+0x40] version=-1"},
		{&SetWatchesRequest{RelativeZxid: 29, PersistentWatches: []string{"/a/x", "/b/x"}, Persistent: true},
			"relative-zxid=0x1d data=[] exist=[] child=[] persistent=[/a/x /b/x] recursive=[]"},
		{&WatcherEvent{Type: EventNodeDeleted, State: StateSyncConnected, Path: "/b"}, "NodeDeleted SyncConnected /b"},
		{&ReplyHeader{Xid: -1, Zxid: -1}, "xid=-1 zxid=-1 ok"},
		{&ConnectRequest{SessionID: 0x19b76daa8000000, LastZxidSeen: 0x1d, TimeOut: 4000}, "session=0x19b76daa8000000 last-zxid=0x1d timeout=4000ms"},
		{&StatResponse{Stat: stat}, "{czxid=0x100000009 mzxid=0x10000000a pzxid=0x9 ctime=1700 mtime=1701 version=1 cversion=0 aversion=0 owner=0x19b76daa8000000 len=4 kids=0}"},
		{&GetChildren2Response{Children: []string{"x", "y"}}, "[x y] {czxid=0x0 mzxid=0x0 pzxid=0x0 ctime=0 mtime=0 version=0 cversion=0 aversion=0 owner=0x0 len=0 kids=0}"},
		{&MultiRequest{Ops: []MultiOp{{Type: OpDelete, Body: &PathVersionRequest{Path: "/a/y", Version: 0}}, {Type: OpCheck, Body: &PathVersionRequest{Path: "/a", Version: 2}}}},
			"[delete /a/y version=0; check /a version=2]"},
		{&MultiRequest{Ops: []MultiOp{{Type: OpGetData, Body: &PathWatchRequest{}, NullPath: true}, {Type: OpGetData, Body: &PathWatchRequest{}}}},
			`[getData null-path; getData ""]`},
		{&MultiResponse{Results: []MultiResult{{Type: OpError, Err: ErrNoNode, Body: &ErrorResponse{Err: ErrNoNode}}, {Type: OpDelete}}},
			"[error NoNode; delete]"},
		{&WhoAmIResponse{ClientInfo: []ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}}}, "[ip:127.0.0.1]"},
		{&GetDataResponse{Stat: stat}, `null {czxid=0x100000009 mzxid=0x10000000a pzxid=0x9 ctime=1700 mtime=1701 version=1 cversion=0 aversion=0 owner=0x19b76daa8000000 len=4 kids=0}`},
	} {
		require.Equal(t, c.want, Describe(c.rec), "%T", c.rec)
	}
}

// Every record of the client protocol has its own rendering: none falls
// back to a Go struct dump.
func TestDescribeCoversClientRecords(t *testing.T) {
	client := map[string]bool{"ConnectRequest": true, "ConnectResponse": true, "WatcherEvent": true,
		"RequestHeader": true, "ReplyHeader": true}
	for op := range opNames {
		for _, newRec := range []func(OpCode) (Record, error){NewRequest, NewResponse} {
			if r, err := newRec(op); err == nil {
				client[strings.TrimPrefix(fmt.Sprintf("%T", r), "*wire.")] = true
			}
		}
	}
	gens := genRecords()
	for name := range client {
		gen, ok := gens[name]
		require.True(t, ok, "no generator for %s", name)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				r := gen.Draw(t, "record")
				s := Describe(r)
				require.NotContains(t, s, "*wire.")
				typ := reflect.TypeOf(r).Elem()
				for i := range typ.NumField() {
					require.NotContains(t, s, typ.Field(i).Name+":", "a struct dump")
				}
			})
		})
	}
}
