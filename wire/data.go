package wire

// Id names an identity under an auth scheme ("world"/"anyone", "digest"/"user:hash", "ip"/"10.0.0.0/8").
type Id struct {
	Scheme string
	ID     string
}

func (r *Id) Encode(e *Encoder) { e.WriteString(r.Scheme); e.WriteString(r.ID) }
func (r *Id) Decode(d *Decoder) { r.Scheme = d.ReadString(); r.ID = d.ReadString() }

// ACL grants Perms to an Id.
type ACL struct {
	Perms int32
	ID    Id
}

func (r *ACL) Encode(e *Encoder) { e.WriteInt(r.Perms); r.ID.Encode(e) }
func (r *ACL) Decode(d *Decoder) { r.Perms = d.ReadInt(); r.ID.Decode(d) }

// Well-known ACL lists (ZooDefs.Ids).
var (
	AnyoneID      = Id{Scheme: "world", ID: "anyone"}
	AuthIDs       = Id{Scheme: "auth", ID: ""}
	OpenACLUnsafe = []ACL{{Perms: PermAll, ID: AnyoneID}}
	ReadACLUnsafe = []ACL{{Perms: PermRead, ID: AnyoneID}}
	CreatorAllACL = []ACL{{Perms: PermAll, ID: AuthIDs}}
)

// minACLSize is the encoded size of an ACL with empty strings.
const minACLSize = 12

// WriteACLs appends a vector<ACL>.
func (e *Encoder) WriteACLs(v []ACL) {
	e.WriteVectorLen(len(v), v == nil)
	for i := range v {
		v[i].Encode(e)
	}
}

// ReadACLs reads a vector<ACL>; a null vector gives nil.
func (d *Decoder) ReadACLs() []ACL {
	return readVector(d, minACLSize, func() (a ACL) { a.Decode(d); return a })
}

// WriteIds appends a vector<Id>.
func (e *Encoder) WriteIds(v []Id) {
	e.WriteVectorLen(len(v), v == nil)
	for i := range v {
		v[i].Encode(e)
	}
}

// ReadIds reads a vector<Id>; a null vector gives nil.
func (d *Decoder) ReadIds() []Id {
	return readVector(d, 8, func() (id Id) { id.Decode(d); return id })
}

// Stat is the node metadata a client sees (org.apache.zookeeper.data.Stat).
// Note the field order on the wire: pzxid comes last.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// StatSize is the encoded size of a Stat.
const StatSize = 68

func (r *Stat) Encode(e *Encoder) {
	e.WriteLong(r.Czxid)
	e.WriteLong(r.Mzxid)
	e.WriteLong(r.Ctime)
	e.WriteLong(r.Mtime)
	e.WriteInt(r.Version)
	e.WriteInt(r.Cversion)
	e.WriteInt(r.Aversion)
	e.WriteLong(r.EphemeralOwner)
	e.WriteInt(r.DataLength)
	e.WriteInt(r.NumChildren)
	e.WriteLong(r.Pzxid)
}

func (r *Stat) Decode(d *Decoder) {
	r.Czxid = d.ReadLong()
	r.Mzxid = d.ReadLong()
	r.Ctime = d.ReadLong()
	r.Mtime = d.ReadLong()
	r.Version = d.ReadInt()
	r.Cversion = d.ReadInt()
	r.Aversion = d.ReadInt()
	r.EphemeralOwner = d.ReadLong()
	r.DataLength = d.ReadInt()
	r.NumChildren = d.ReadInt()
	r.Pzxid = d.ReadLong()
}

// StatPersisted is the node metadata the server stores in snapshots
// (org.apache.zookeeper.data.StatPersisted): no dataLength or numChildren, the
// stored cversion, and the container/TTL kind folded into ephemeralOwner.
type StatPersisted struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	Pzxid          int64
}

func (r *StatPersisted) Encode(e *Encoder) {
	e.WriteLong(r.Czxid)
	e.WriteLong(r.Mzxid)
	e.WriteLong(r.Ctime)
	e.WriteLong(r.Mtime)
	e.WriteInt(r.Version)
	e.WriteInt(r.Cversion)
	e.WriteInt(r.Aversion)
	e.WriteLong(r.EphemeralOwner)
	e.WriteLong(r.Pzxid)
}

func (r *StatPersisted) Decode(d *Decoder) {
	r.Czxid = d.ReadLong()
	r.Mzxid = d.ReadLong()
	r.Ctime = d.ReadLong()
	r.Mtime = d.ReadLong()
	r.Version = d.ReadInt()
	r.Cversion = d.ReadInt()
	r.Aversion = d.ReadInt()
	r.EphemeralOwner = d.ReadLong()
	r.Pzxid = d.ReadLong()
}

// ClientInfo is one identity in a whoAmI response.
type ClientInfo struct {
	AuthScheme string
	User       string
}

func (r *ClientInfo) Encode(e *Encoder) { e.WriteString(r.AuthScheme); e.WriteString(r.User) }
func (r *ClientInfo) Decode(d *Decoder) { r.AuthScheme = d.ReadString(); r.User = d.ReadString() }
