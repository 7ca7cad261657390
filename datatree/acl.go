package datatree

import (
	"crypto/sha1"
	"encoding/base64"
	"sort"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// openACLRef is the ACL reference ZooKeeper uses for a null ACL list: it
// reads as world:anyone with all permissions and is never counted.
const openACLRef int64 = -1

// aclCache is ZooKeeper's ReferenceCountedACLCache: every distinct ACL list
// gets a long reference, which nodes and snapshots store, counted so that a
// list disappears with its last node. References only grow, never reused.
type aclCache struct {
	byRef   map[int64]*aclEntry
	byKey   map[string]int64 // encoded list → reference
	last    int64            // highest reference handed out (ZooKeeper's aclIndex)
	scratch wire.Encoder     // reused to encode a list's key
}

type aclEntry struct {
	acls []wire.ACL
	key  string
	refs int64
}

func newACLCache() aclCache {
	return aclCache{byRef: make(map[int64]*aclEntry), byKey: make(map[string]int64)}
}

// aclKey encodes a list so that equal lists (same entries, same order) have
// equal keys, as Java's List.equals compares them.
func aclKey(acls []wire.ACL) string {
	var e wire.Encoder
	e.WriteACLs(acls)
	return string(e.Bytes())
}

// ref returns the reference of acls, adding one usage (convertAcls).
func (c *aclCache) ref(acls []wire.ACL) int64 {
	if acls == nil {
		return openACLRef
	}
	// The key is looked up from the scratch encoding without a copy; only
	// a new list's key is kept.
	c.scratch.Reset()
	c.scratch.WriteACLs(acls)
	r, ok := c.byKey[string(c.scratch.Bytes())]
	if !ok {
		key := string(c.scratch.Bytes())
		c.last++
		r = c.last
		c.byRef[r] = &aclEntry{acls: acls, key: key}
		c.byKey[key] = r
	}
	c.byRef[r].refs++
	return r
}

// addUsage counts one more node using r; unknown references are ignored, as
// ZooKeeper ignores them.
func (c *aclCache) addUsage(r int64) {
	if e := c.byRef[r]; e != nil {
		e.refs++
	}
}

// release drops one usage of r and forgets the list with its last usage.
func (c *aclCache) release(r int64) {
	e := c.byRef[r]
	if e == nil {
		return
	}
	e.refs--
	if e.refs <= 0 {
		delete(c.byRef, r)
		delete(c.byKey, e.key)
	}
}

// danglingACL is what a reference missing from the cache reads as: a list
// that grants nothing (but to the super user). A fuzzy snapshot can hold
// such references — its ACL map is written first, so a list created later
// is not in it — until the replayed setACL that made them sets the node's
// ACL again; ZooKeeper fails any access to such a node.
var danglingACL = []wire.ACL{{Perms: 0, ID: wire.AnyoneID}}

// list returns the ACL list of r: world:anyone ALL for openACLRef.
func (c *aclCache) list(r int64) []wire.ACL {
	if r == openACLRef {
		return wire.OpenACLUnsafe
	}
	if e := c.byRef[r]; e != nil {
		return e.acls
	}
	return danglingACL
}

// purgeUnused forgets lists no node uses (after a snapshot load).
func (c *aclCache) purgeUnused() {
	for r, e := range c.byRef {
		if e.refs <= 0 {
			delete(c.byRef, r)
			delete(c.byKey, e.key)
		}
	}
}

// sortedRefs returns the cache's references in increasing order.
func (c *aclCache) sortedRefs() []int64 {
	refs := make([]int64, 0, len(c.byRef))
	for r := range c.byRef {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i] < refs[j] })
	return refs
}

// checkACL is ZooKeeperServer.checkACL: whether auth grants perm on a node
// with acl. An empty list grants everything; a "super" identity too.
func checkACL(acl []wire.ACL, perm int32, auth []wire.Id) bool {
	if len(acl) == 0 {
		return true
	}
	for _, id := range auth {
		if id.Scheme == "super" {
			return true
		}
	}
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID.Scheme == "world" && a.ID.ID == "anyone" {
			return true
		}
		for _, id := range auth {
			if id.Scheme == a.ID.Scheme && idMatches(id, a.ID.ID) {
				return true
			}
		}
	}
	return false
}

// idMatches applies the matching rule of the id's scheme (its
// AuthenticationProvider.matches); schemes without a provider never match.
func idMatches(id wire.Id, aclExpr string) bool {
	switch id.Scheme {
	case "digest", "x509":
		return id.ID == aclExpr
	case "ip":
		return ipMatches(id.ID, aclExpr)
	}
	return false
}

// fixupACL is PrepRequestProcessor.fixupACL: it drops duplicates, refuses
// empty lists and ids no provider accepts, and expands "auth" entries to the
// requester's authenticated (digest, x509) ids. ok is false for InvalidACL.
func fixupACL(acls []wire.ACL, auth []wire.Id, cfg Config) (out []wire.ACL, ok bool) {
	if plainACL(acls) {
		return acls, true
	}
	uniq := make([]wire.ACL, 0, len(acls))
	for _, a := range acls {
		dup := false
		for _, u := range uniq {
			if u == a {
				dup = true
				break
			}
		}
		if !dup {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, false
	}
	out = make([]wire.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch {
		case a.ID.Scheme == "world" && a.ID.ID == "anyone":
			out = append(out, a)
		case a.ID.Scheme == "auth":
			expanded := false
			for _, id := range AuthOrder(auth) {
				// Only providers that authenticate expand "auth": digest
				// and x509 (ip does not authenticate; super has no
				// provider).
				if id.Scheme == "digest" || (id.Scheme == "x509" && cfg.X509Enabled) {
					out = append(out, wire.ACL{Perms: a.Perms, ID: id})
					expanded = true
				}
			}
			if !expanded {
				return nil, false
			}
		case a.ID.Scheme == "digest" && validDigestID(a.ID.ID),
			a.ID.Scheme == "ip" && validIPExpr(a.ID.ID),
			a.ID.Scheme == "x509" && cfg.X509Enabled && validX500Name(a.ID.ID):
			out = append(out, a)
		default:
			return nil, false
		}
	}
	return out, true
}

// plainACL reports whether fixupACL would return acls unchanged: a
// non-empty list of valid ids without "auth" entries or duplicates (the
// common case, checked without allocating).
func plainACL(acls []wire.ACL) bool {
	if len(acls) == 0 {
		return false
	}
	for i, a := range acls {
		switch {
		case a.ID.Scheme == "world" && a.ID.ID == "anyone",
			a.ID.Scheme == "digest" && validDigestID(a.ID.ID),
			a.ID.Scheme == "ip" && validIPExpr(a.ID.ID):
		default:
			return false
		}
		for _, b := range acls[:i] {
			if a == b {
				return false
			}
		}
	}
	return true
}

// maskDigests shows digest ids as "user:x", as getACL answers a caller
// without ADMIN on the node.
func maskDigests(acls []wire.ACL) []wire.ACL {
	out := make([]wire.ACL, len(acls))
	for i, a := range acls {
		out[i] = a
		if a.ID.Scheme == "digest" {
			user, _, found := strings.Cut(a.ID.ID, ":")
			if found {
				out[i].ID.ID = user + ":x"
			}
		}
	}
	return out
}

// javaSplit splits s on sep as Java's String.split does: trailing empty
// strings are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// validDigestID is DigestAuthenticationProvider.isValid: id.split(":") has
// exactly two parts — Java drops trailing empty parts, so trailing colons
// do not count.
func validDigestID(id string) bool {
	trimmed := strings.TrimRight(id, ":")
	return trimmed != "" && strings.Count(trimmed, ":") == 1
}

// ipv4 parses a dotted IPv4 address as IPAuthenticationProvider does
// (decimal parts 0–255, Java's optional sign accepted).
func ipv4(s string) ([4]byte, bool) {
	var b [4]byte
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return b, false
	}
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 32)
		if err != nil || v < 0 || v > 255 {
			return b, false
		}
		b[i] = byte(v)
	}
	return b, true
}

// ipExpr parses "a.b.c.d" or "a.b.c.d/bits".
func ipExpr(expr string) (addr [4]byte, bits int, ok bool) {
	host, suffix, hasBits := strings.Cut(expr, "/")
	addr, ok = ipv4(host)
	if !ok {
		return addr, 0, false
	}
	bits = 32
	if hasBits {
		v, err := strconv.ParseInt(suffix, 10, 32)
		if err != nil || v < 0 || v > 32 {
			return addr, 0, false
		}
		bits = int(v)
	}
	return addr, bits, true
}

func validIPExpr(expr string) bool { _, _, ok := ipExpr(expr); return ok }

// ipMatches is IPAuthenticationProvider.matches: the client address and the
// ACL's address agree on the first bits bits.
func ipMatches(clientAddr, aclExpr string) bool {
	want, bits, ok := ipExpr(aclExpr)
	if !ok {
		return false
	}
	got, ok := ipv4(clientAddr)
	if !ok {
		return false
	}
	for i := 0; i < 4; i++ {
		keep := bits - 8*i
		var mask byte
		switch {
		case keep >= 8:
			mask = 0xff
		case keep > 0:
			mask = ^byte(0xff >> keep)
		}
		if got[i]&mask != want[i]&mask {
			return false
		}
	}
	return true
}

// DigestID is the id a digest login "user:password" authenticates as, and the
// form digest ACLs name: "user:" + base64(sha1("user:password")).
func DigestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// Authenticate answers an auth packet (addauth) as ZooKeeper's built-in
// providers do: the ids to add to the connection, or AuthFailed. "digest"
// adds ("digest", DigestID(auth)) and, when that equals cfg.SuperDigest,
// ("super", "") first; "ip" adds the client's address; "x509" adds the
// client certificate's ids again (CertificateIdentities), and fails on a
// connection without one. Any other scheme, "world" included, fails
// (ZooKeeper then closes the connection).
func Authenticate(cfg Config, scheme string, auth []byte, client Client) ([]wire.Id, wire.ErrCode) {
	switch scheme {
	case "digest":
		id := DigestID(string(auth))
		if cfg.SuperDigest != "" && id == cfg.SuperDigest {
			return []wire.Id{{Scheme: "super", ID: ""}, {Scheme: "digest", ID: id}}, wire.ErrOK
		}
		return []wire.Id{{Scheme: "digest", ID: id}}, wire.ErrOK
	case "ip":
		return []wire.Id{{Scheme: "ip", ID: client.Addr}}, wire.ErrOK
	case "x509":
		if ids := CertificateIdentities(cfg, client.CertSubject); client.HasCert && ids != nil {
			return ids, wire.ErrOK
		}
	}
	return nil, wire.ErrAuthFailed
}

// Client is what the auth providers know of a connection: its IP address
// and, for a TLS client that presented a verified certificate, the
// certificate's subject (RFC 2253, as Java prints it).
type Client struct {
	Addr        string
	HasCert     bool
	CertSubject string
}
