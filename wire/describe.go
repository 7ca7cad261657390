package wire

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Describe renders a client-protocol record for traces and test failures:
// field names and values only (never pointers, never map order, so the
// same record always reads the same), paths bare unless they need quoting,
// zxids and session ids in hex, data quoted and cut after describeDataMax
// bytes, ACLs as scheme:id:perms with ZooKeeper's perm letters. The opcode
// is not part of a body; callers print it before.
func Describe(r Record) string {
	var b describer
	b.record(r)
	return b.String()
}

// describeDataMax is how much of a data buffer Describe shows.
const describeDataMax = 48

type describer struct {
	strings.Builder
	// nullPath: the next path to render was jute's null string (a multi
	// op's, whose body renders its path first).
	nullPath bool
}

func (b *describer) f(format string, args ...any) { fmt.Fprintf(b, format, args...) }

func (b *describer) record(r Record) {
	switch r := r.(type) {
	case nil:
	case *Empty:
	case *ConnectRequest:
		b.f("session=%s last-zxid=%s timeout=%dms", SessionString(r.SessionID), ZxidString(r.LastZxidSeen), r.TimeOut)
		if r.HasReadOnly {
			b.f(" read-only=%t", r.ReadOnly)
		}
	case *ConnectResponse:
		b.f("session=%s timeout=%dms", SessionString(r.SessionID), r.TimeOut)
		if r.HasReadOnly {
			b.f(" read-only=%t", r.ReadOnly)
		}
	case *RequestHeader:
		b.f("xid=%d %s", r.Xid, r.Type)
	case *ReplyHeader:
		b.f("xid=%d zxid=%s %s", r.Xid, ZxidString(r.Zxid), r.Err.String())
	case *AuthPacket:
		b.f("%s %s", quotePath(r.Scheme), describeData(r.Auth))
	case *PathRequest:
		b.path(r.Path)
	case *RawPathRequest:
		b.path(r.Path)
	case *PathWatchRequest:
		b.path(r.Path)
		if r.Watch {
			b.WriteString(" watch")
		}
	case *PathVersionRequest:
		b.path(r.Path)
		b.f(" version=%d", r.Version)
	case *SetDataRequest:
		b.path(r.Path)
		b.f(" %s version=%d", describeData(r.Data), r.Version)
	case *CreateRequest:
		b.path(r.Path)
		b.f(" %s %s acl=", describeData(r.Data), r.Flags)
		b.acls(r.ACL)
		if r.HasTTL {
			b.f(" ttl=%dms", r.TTL)
		}
	case *SetACLRequest:
		b.path(r.Path)
		b.WriteString(" acl=")
		b.acls(r.ACL)
		b.f(" version=%d", r.Version)
	case *ReconfigRequest:
		b.f("joining=%s leaving=%s members=%s config-id=%s", quotePath(r.JoiningServers), quotePath(r.LeavingServers),
			quotePath(r.NewMembers), ZxidString(r.CurConfigID))
	case *PathTypeRequest:
		b.path(r.Path)
		b.f(" %s", r.Type)
	case *AddWatchRequest:
		b.path(r.Path)
		b.f(" %s", r.Mode)
	case *SetWatchesRequest:
		b.f("relative-zxid=%s data=", ZxidString(r.RelativeZxid))
		b.paths(r.DataWatches)
		b.WriteString(" exist=")
		b.paths(r.ExistWatches)
		b.WriteString(" child=")
		b.paths(r.ChildWatches)
		if r.Persistent {
			b.WriteString(" persistent=")
			b.paths(r.PersistentWatches)
			b.WriteString(" recursive=")
			b.paths(r.PersistentRecursiveWatches)
		}
	case *SASLRequest:
		b.f("token of %d bytes", len(r.Token))
	case *WatcherEvent:
		b.f("%s %s ", r.Type, r.State)
		b.path(r.Path)
	case *ErrorResponse:
		b.WriteString(r.Err.String())
	case *PathResponse:
		b.path(r.Path)
	case *Create2Response:
		b.path(r.Path)
		b.WriteByte(' ')
		b.stat(&r.Stat)
	case *StatResponse:
		b.stat(&r.Stat)
	case *GetDataResponse:
		b.f("%s ", describeData(r.Data))
		b.stat(&r.Stat)
	case *StringsResponse:
		b.paths(r.Strings)
	case *GetChildren2Response:
		b.paths(r.Children)
		b.WriteByte(' ')
		b.stat(&r.Stat)
	case *GetACLResponse:
		b.acls(r.ACL)
		b.WriteByte(' ')
		b.stat(&r.Stat)
	case *IntResponse:
		b.f("%d", r.Value)
	case *WhoAmIResponse:
		b.WriteByte('[')
		for i, c := range r.ClientInfo {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.f("%s:%s", quotePath(c.AuthScheme), quotePath(c.User))
		}
		b.WriteByte(']')
	case *MultiRequest:
		b.WriteByte('[')
		for i, op := range r.Ops {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(op.Type.String())
			if op.Body != nil {
				b.WriteByte(' ')
				b.nullPath = op.NullPath
				b.record(op.Body)
				b.nullPath = false
			}
		}
		b.WriteByte(']')
	case *MultiResponse:
		b.WriteByte('[')
		for i, res := range r.Results {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(res.Type.String())
			if res.Body != nil {
				b.WriteByte(' ')
				b.record(res.Body)
			}
		}
		b.WriteByte(']')
	default:
		// Not a client-protocol record (TestDescribeCoversClientRecords).
		b.f("%T %+v", r, r)
	}
}

func (b *describer) path(p string) {
	if b.nullPath {
		b.nullPath = false
		b.WriteString("null-path")
		return
	}
	b.WriteString(quotePath(p))
}

func (b *describer) paths(ps []string) {
	b.WriteByte('[')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.path(p)
	}
	b.WriteByte(']')
}

func (b *describer) acls(acls []ACL) {
	b.WriteByte('[')
	for i, a := range acls {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.f("%s:%s:%s", quotePath(a.ID.Scheme), quotePath(a.ID.ID), PermString(a.Perms))
	}
	b.WriteByte(']')
}

func (b *describer) stat(s *Stat) {
	b.f("{czxid=%s mzxid=%s pzxid=%s ctime=%d mtime=%d version=%d cversion=%d aversion=%d owner=%s len=%d kids=%d}",
		ZxidString(s.Czxid), ZxidString(s.Mzxid), ZxidString(s.Pzxid), s.Ctime, s.Mtime, s.Version, s.Cversion,
		s.Aversion, SessionString(s.EphemeralOwner), s.DataLength, s.NumChildren)
}

// ZxidString prints a zxid in hex, as ZooKeeper's logs do; -1, the "no
// zxid" of notifications and of replies that consumed none, stays -1.
func ZxidString(z int64) string {
	if z < 0 {
		return strconv.FormatInt(z, 10)
	}
	return "0x" + strconv.FormatInt(z, 16)
}

// SessionString prints a session id in hex, as ZooKeeper's logs do.
func SessionString(id int64) string { return "0x" + strconv.FormatUint(uint64(id), 16) }

// PermString prints ACL permission bits with zkCli's letters (cdrwa), any
// other bits after them in hex.
func PermString(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit    int32
		letter byte
	}{{PermCreate, 'c'}, {PermDelete, 'd'}, {PermRead, 'r'}, {PermWrite, 'w'}, {PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.letter)
		}
	}
	if rest := perms &^ PermAll; rest != 0 {
		fmt.Fprintf(&b, "+0x%x", uint32(rest))
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// quotePath leaves a path bare when it is non-empty, valid UTF-8 and made of
// graphic characters other than space and '"', else quotes it with Go's
// escapes, so that every byte is visible.
func quotePath(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || !unicode.IsGraphic(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// describeData quotes a data buffer, cut after describeDataMax bytes; a null
// buffer is "null".
func describeData(d []byte) string {
	if d == nil {
		return "null"
	}
	if len(d) <= describeDataMax {
		return strconv.Quote(string(d))
	}
	return fmt.Sprintf("%s…(%d bytes)", strconv.Quote(string(d[:describeDataMax])), len(d))
}
