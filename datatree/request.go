package datatree

import "github.com/zabd/zabd/wire"

// WatcherID names the holder of watches: the caller picks it (one per client
// connection) and gets it back in every WatchEvent.
type WatcherID int64

// Request is a client request as the pipeline hands it to Prepare or Read.
//
// Body holds the decoded request record, by Op:
//
//	OpCreate, OpCreate2, OpCreateContainer   *wire.CreateRequest
//	OpCreateTTL                              *wire.CreateRequest (HasTTL set)
//	OpDelete, OpCheck                        *wire.PathVersionRequest
//	OpDeleteContainer (Internal only)        *wire.PathRequest
//	OpSetData                                *wire.SetDataRequest
//	OpSetACL                                 *wire.SetACLRequest
//	OpMulti, OpMultiRead                     *wire.MultiRequest or *MultiRequest
//	OpCreateSession                          *wire.CreateSessionTxn (negotiated timeout)
//	OpCloseSession, OpReconfig               ignored (nil is fine)
//	OpExists, OpGetData, OpGetChildren,
//	OpGetChildren2                           *wire.PathWatchRequest
//	OpGetACL, OpGetAllChildrenNumber,
//	OpGetEphemerals (path = prefix), OpSync  *wire.PathRequest
//	OpAddWatch                               *wire.AddWatchRequest
//	OpCheckWatches, OpRemoveWatches          *wire.PathTypeRequest
//	OpSetWatches, OpSetWatches2              *wire.SetWatchesRequest
//
// A body of the wrong type answers MarshallingError, never a panic.
type Request struct {
	Session int64       // the client's session id (0 for the server's own requests)
	Cxid    int32       // the client's xid, copied into the txn header
	Op      wire.OpCode // request type
	Body    wire.Record // decoded body, see above
	// Auth is the connection's identities: ("ip", "<client address>") for
	// every connection, plus what addauth added (("digest", "user:hash"),
	// ("super", "") for the super digest — see Authenticate).
	Auth []wire.Id
	// Internal marks a request the server issues itself (ReapCandidates):
	// only those may use OpDeleteContainer; a client's gets BadArguments.
	Internal bool
	// ReapCzxid and ReapMzxid name the node ReapCandidates chose for an
	// Internal deleteContainer: Prepare deletes only that node, and a TTL
	// node only unmodified since. The reaper chooses from the applied tree,
	// which lags the txns already accepted; ZooKeeper's prepare checks only
	// that the node has no children and is no ephemeral, so a reap decided
	// before a delete and create at the same path deletes the new node —
	// a never-used container, or a client's persistent node (found by the
	// simulator's hunt, seeds 38940 and 35633). zabd answers such a reap
	// BadVersion (an error txn), as ZooKeeper answers one for an ephemeral.
	ReapCzxid, ReapMzxid int64
}

// MultiRequest is the body of a multi or multiRead request: its ops in order.
type MultiRequest struct {
	Ops []MultiOp
}

// MultiOp is one op of a multi: its opcode (from the MultiHeader) and body,
// typed as for a Request of that opcode (a getData or getChildren op has a
// *wire.PathWatchRequest whose Watch is ignored). NullPath says its path
// was jute's null string (wire.MultiOp.NullPath).
type MultiOp struct {
	Op       wire.OpCode
	NullPath bool // beside Op, where it takes no room of its own
	Body     wire.Record
}

// Txn is a txn as ZooKeeper logs it: header, body and the digest of the tree
// after it. Prepare makes them; Apply applies them, wherever they come from.
type Txn struct {
	Header wire.TxnHeader
	// Body is the txn record of Header.Type: *wire.CreateTxn (create,
	// create2), *wire.CreateTTLTxn, *wire.CreateContainerTxn,
	// *wire.DeleteTxn (delete, deleteContainer), *wire.SetDataTxn,
	// *wire.SetACLTxn, *wire.CheckVersionTxn, *wire.CreateSessionTxn,
	// *wire.CloseSessionTxn, *wire.ErrorTxn or *wire.MultiTxn (whose sub-txn
	// bodies are encoded, as on the wire).
	Body wire.Record
	// Digest is the tree digest after the txn, as ZooKeeper writes it after
	// the txn in its log. Version 0 means none: ZooKeeper writes no digest
	// for an ErrorTxn.
	Digest wire.TxnDigest
}

// Result is the outcome of a request: what the reply carries. Op says which
// response record to encode:
//
//	OpCreate                 wire.PathResponse{Path}
//	OpCreate2, OpCreateTTL,
//	OpCreateContainer        wire.Create2Response{Path, Stat}
//	OpSetData, OpSetACL,
//	OpExists, OpCheck        wire.StatResponse{Stat} (OpCheck outside a multi: ZooKeeper 3.8 never answers it, docs/compatibility.md point 19)
//	OpGetData                wire.GetDataResponse{Data, Stat}
//	OpGetChildren            wire.StringsResponse{Children}
//	OpGetChildren2           wire.GetChildren2Response{Children, Stat}
//	OpGetACL                 wire.GetACLResponse{ACL, Stat}
//	OpGetEphemerals          wire.StringsResponse{Children}
//	OpGetAllChildrenNumber   wire.IntResponse{Count}
//	OpSync                   wire.PathResponse{Path}
//	OpMulti, OpMultiRead     one result per op in Multi
//	OpDelete, OpDeleteContainer, OpCloseSession, OpCreateSession,
//	OpAddWatch, OpCheckWatches, OpRemoveWatches, OpSetWatches(2)   no body
//
// Inside Multi, a sub-result's Op is OpCreate, OpCreate2 (createTTL and
// createContainer sub-ops answer like create2), OpDelete, OpSetData,
// OpCheck, OpGetData, OpGetChildren or OpError (an ErrorResult with Err).
//
// When Err is not ErrOK the reply has no body, except for a multiRead or a
// multi with Multi not nil: ZooKeeper had begun its response and sends the
// results so far. A write refused in Prepare (an ErrorTxn) answers with Op
// OpError. For OpMulti, Err is ErrOK even when the multi's ops failed, as
// ZooKeeper's reply header says; the sub-results carry the codes (only a
// multi that fails before it takes a txn, FailsBeforeTxn, has an Err).
// Stat is filled for every create (OpCreate's reply does not carry it).
// Data and Children alias the tree's immutable storage and must not be
// modified.
type Result struct {
	Op       wire.OpCode
	Err      wire.ErrCode
	Path     string
	Stat     wire.Stat
	Data     []byte
	Children []string
	ACL      []wire.ACL
	Count    int32
	Multi    []Result
}

// WatchEvent is one notification for one watcher.
type WatchEvent struct {
	Watcher WatcherID
	Event   wire.WatcherEvent
}

// Config holds the server settings that change the tree's behaviour.
type Config struct {
	// SuperDigest is ZooKeeper's zookeeper.DigestAuthenticationProvider.superDigest,
	// "super:<base64 sha1>"; "" disables the super user.
	SuperDigest string
	// ExtendedTypesEnabled is zookeeper.extendedTypesEnabled: TTL nodes are
	// refused with Unimplemented without it, and without it an
	// ephemeralOwner in the TTL encoding reads as an ephemeral's, as
	// ZooKeeper's EphemeralType reads it.
	ExtendedTypesEnabled bool
	// EnforceQuota is zookeeper.enforceQuota: writes past a hard quota limit
	// fail with QuotaExceeded.
	EnforceQuota bool
	// X509Enabled registers the x509 scheme (ZooKeeper's
	// X509AuthenticationProvider), as a secure client port does: ACLs may
	// name x509 ids, and "auth" ACL entries expand to them.
	X509Enabled bool
	// X509SuperUser is zookeeper.X509AuthenticationProvider.superUser: the
	// certificate subject that authenticates as the super user.
	X509SuperUser string
	// Warn receives warnings (soft quota limits passed); nil discards them.
	Warn func(msg string)
	// Traffic, if set, is told the size of each read and write, for
	// ZooKeeper's per-namespace metrics (see Traffic).
	Traffic Traffic
}

// Encode writes the multi framing (wire.MultiRequest's).
func (m *MultiRequest) Encode(e *wire.Encoder) { m.toWire().Encode(e) }

// Decode reads the multi framing (wire.MultiRequest's).
func (m *MultiRequest) Decode(d *wire.Decoder) {
	var w wire.MultiRequest
	w.Decode(d)
	*m = *NewMultiRequest(&w)
}

// NewMultiRequest is the multi whose ops w decoded.
func NewMultiRequest(w *wire.MultiRequest) *MultiRequest {
	m := &MultiRequest{Ops: make([]MultiOp, len(w.Ops))}
	for i, op := range w.Ops {
		m.Ops[i] = MultiOp{Op: op.Type, Body: op.Body, NullPath: op.NullPath}
	}
	return m
}

func (m *MultiRequest) toWire() *wire.MultiRequest {
	w := &wire.MultiRequest{Ops: make([]wire.MultiOp, len(m.Ops))}
	for i, op := range m.Ops {
		w.Ops[i] = wire.MultiOp{Type: op.Op, Body: op.Body, NullPath: op.NullPath}
	}
	return w
}

// multiOps returns the ops of a multi or multiRead body, which may be a
// *MultiRequest or a *wire.MultiRequest.
func multiOps(body wire.Record) ([]MultiOp, bool) {
	switch b := body.(type) {
	case *MultiRequest:
		return b.Ops, true
	case *wire.MultiRequest:
		return NewMultiRequest(b).Ops, true
	}
	return nil, false
}
