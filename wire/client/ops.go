package client

import (
	"context"
	"fmt"
	"time"

	"github.com/zabd/zabd/wire"
)

// OpenACL is world:anyone with every permission.
var OpenACL = []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}}

// call sends op with req, waits, and decodes the reply into resp (which may
// be nil for replies without a body). It returns the reply so that callers
// can read its zxid.
func (c *Conn) call(ctx context.Context, op wire.OpCode, req, resp wire.Record) (*Reply, error) {
	r, err := c.Do(ctx, op, req)
	if err != nil {
		return nil, err
	}
	if r.Header.Err != wire.ErrOK {
		return r, r.Header.Err
	}
	if resp != nil {
		if err := r.Decode(resp); err != nil {
			return r, err
		}
	}
	return r, nil
}

// Create creates a node and returns its path (with the sequence suffix).
func (c *Conn) Create(ctx context.Context, path string, data []byte, acl []wire.ACL, mode wire.CreateMode) (string, error) {
	var resp wire.PathResponse
	_, err := c.call(ctx, wire.OpCreate, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: mode}, &resp)
	return resp.Path, err
}

// Create2 creates a node and returns its path and stat.
func (c *Conn) Create2(ctx context.Context, path string, data []byte, acl []wire.ACL, mode wire.CreateMode) (string, wire.Stat, error) {
	var resp wire.Create2Response
	_, err := c.call(ctx, wire.OpCreate2, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: mode}, &resp)
	return resp.Path, resp.Stat, err
}

// CreateContainer creates a container node.
func (c *Conn) CreateContainer(ctx context.Context, path string, data []byte, acl []wire.ACL) (string, wire.Stat, error) {
	var resp wire.Create2Response
	_, err := c.call(ctx, wire.OpCreateContainer, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: wire.ModeContainer}, &resp)
	return resp.Path, resp.Stat, err
}

// CreateTTL creates a TTL node (mode PERSISTENT_WITH_TTL or
// PERSISTENT_SEQUENTIAL_WITH_TTL).
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, acl []wire.ACL, mode wire.CreateMode, ttl time.Duration) (string, wire.Stat, error) {
	var resp wire.Create2Response
	req := wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: mode, TTL: ttl.Milliseconds(), HasTTL: true}
	_, err := c.call(ctx, wire.OpCreateTTL, &req, &resp)
	return resp.Path, resp.Stat, err
}

// Delete deletes a node if version matches (-1: any).
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	_, err := c.call(ctx, wire.OpDelete, &wire.PathVersionRequest{Path: path, Version: version}, nil)
	return err
}

// Exists returns the node's stat; with watch it leaves a data watch (also
// on a missing node).
func (c *Conn) Exists(ctx context.Context, path string, watch bool) (wire.Stat, error) {
	var resp wire.StatResponse
	_, err := c.call(ctx, wire.OpExists, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp)
	return resp.Stat, err
}

// GetData returns a node's data and stat.
func (c *Conn) GetData(ctx context.Context, path string, watch bool) ([]byte, wire.Stat, error) {
	var resp wire.GetDataResponse
	_, err := c.call(ctx, wire.OpGetData, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp)
	return resp.Data, resp.Stat, err
}

// SetData replaces a node's data if version matches.
func (c *Conn) SetData(ctx context.Context, path string, data []byte, version int32) (wire.Stat, error) {
	var resp wire.StatResponse
	_, err := c.call(ctx, wire.OpSetData, &wire.SetDataRequest{Path: path, Data: data, Version: version}, &resp)
	return resp.Stat, err
}

// GetACL returns a node's ACL and stat.
func (c *Conn) GetACL(ctx context.Context, path string) ([]wire.ACL, wire.Stat, error) {
	var resp wire.GetACLResponse
	_, err := c.call(ctx, wire.OpGetACL, &wire.PathRequest{Path: path}, &resp)
	return resp.ACL, resp.Stat, err
}

// SetACL replaces a node's ACL if version matches its aversion.
func (c *Conn) SetACL(ctx context.Context, path string, acl []wire.ACL, version int32) (wire.Stat, error) {
	var resp wire.StatResponse
	_, err := c.call(ctx, wire.OpSetACL, &wire.SetACLRequest{Path: path, ACL: acl, Version: version}, &resp)
	return resp.Stat, err
}

// GetChildren lists a node's children (getChildren, opcode 8).
func (c *Conn) GetChildren(ctx context.Context, path string, watch bool) ([]string, error) {
	var resp wire.StringsResponse
	_, err := c.call(ctx, wire.OpGetChildren, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp)
	return resp.Strings, err
}

// GetChildren2 lists a node's children with its stat.
func (c *Conn) GetChildren2(ctx context.Context, path string, watch bool) ([]string, wire.Stat, error) {
	var resp wire.GetChildren2Response
	_, err := c.call(ctx, wire.OpGetChildren2, &wire.PathWatchRequest{Path: path, Watch: watch}, &resp)
	return resp.Children, resp.Stat, err
}

// Sync waits until the server has applied everything committed before it.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	var resp wire.PathResponse
	_, err := c.call(ctx, wire.OpSync, &wire.PathRequest{Path: path}, &resp)
	return resp.Path, err
}

// Check sends a stand-alone check request (opcode 13).
func (c *Conn) Check(ctx context.Context, path string, version int32) error {
	_, err := c.call(ctx, wire.OpCheck, &wire.PathVersionRequest{Path: path, Version: version}, nil)
	return err
}

// GetEphemerals lists the caller's ephemeral nodes whose path starts with prefix.
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	var resp wire.StringsResponse
	_, err := c.call(ctx, wire.OpGetEphemerals, &wire.PathRequest{Path: prefix}, &resp)
	return resp.Strings, err
}

// GetAllChildrenNumber counts all descendants of path.
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int32, error) {
	var resp wire.IntResponse
	_, err := c.call(ctx, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: path}, &resp)
	return resp.Value, err
}

// AddWatch adds a persistent or persistent-recursive watch.
func (c *Conn) AddWatch(ctx context.Context, path string, mode wire.AddWatchMode) error {
	_, err := c.call(ctx, wire.OpAddWatch, &wire.AddWatchRequest{Path: path, Mode: mode}, nil)
	return err
}

// RemoveWatches removes the caller's watches of type t on path.
func (c *Conn) RemoveWatches(ctx context.Context, path string, t wire.WatcherType) error {
	_, err := c.call(ctx, wire.OpRemoveWatches, &wire.PathTypeRequest{Path: path, Type: t}, nil)
	return err
}

// CheckWatches asks whether the caller has watches of type t on path.
func (c *Conn) CheckWatches(ctx context.Context, path string, t wire.WatcherType) error {
	_, err := c.call(ctx, wire.OpCheckWatches, &wire.PathTypeRequest{Path: path, Type: t}, nil)
	return err
}

// WhoAmI returns the session's authenticated identities.
func (c *Conn) WhoAmI(ctx context.Context) ([]wire.ClientInfo, error) {
	var resp wire.WhoAmIResponse
	_, err := c.call(ctx, wire.OpWhoAmI, nil, &resp)
	return resp.ClientInfo, err
}

// AddAuth adds an identity to the session (e.g. scheme "digest", auth "user:pw").
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	_, err := c.call(ctx, wire.OpAuth, &wire.AuthPacket{Scheme: scheme, Auth: auth}, nil)
	return err
}

// SetWatches re-registers watches after a reconnect (setWatches2 when the
// request has persistent watches, else setWatches).
func (c *Conn) SetWatches(ctx context.Context, req wire.SetWatchesRequest) error {
	op := wire.OpSetWatches
	if req.Persistent {
		op = wire.OpSetWatches2
	}
	_, err := c.call(ctx, op, &req, nil)
	return err
}

// Ping sends a ping and waits for its answer.
func (c *Conn) Ping(ctx context.Context) error {
	_, err := c.call(ctx, wire.OpPing, nil, nil)
	return err
}

// CloseSession ends the session (closeSession) and then the connection.
func (c *Conn) CloseSession(ctx context.Context) error {
	_, err := c.call(ctx, wire.OpCloseSession, nil, nil)
	c.Close()
	return err
}

// Op is one operation of a multi or multiRead.
type Op struct {
	Type    wire.OpCode
	Path    string
	Data    []byte
	ACL     []wire.ACL
	Mode    wire.CreateMode
	TTL     time.Duration
	Version int32
}

// OpResult is one operation's result in a multi or multiRead response.
type OpResult struct {
	Type     wire.OpCode // the op's type, or OpError
	Err      wire.ErrCode
	Path     string
	Stat     wire.Stat
	Data     []byte
	Children []string
}

// multiOp builds the wire record of one op.
func (op *Op) multiOp() (wire.MultiOp, error) {
	var body wire.Record
	switch op.Type {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer:
		body = &wire.CreateRequest{Path: op.Path, Data: op.Data, ACL: op.ACL, Flags: op.Mode}
	case wire.OpCreateTTL:
		body = &wire.CreateRequest{Path: op.Path, Data: op.Data, ACL: op.ACL, Flags: op.Mode, TTL: op.TTL.Milliseconds(), HasTTL: true}
	case wire.OpDelete, wire.OpCheck:
		body = &wire.PathVersionRequest{Path: op.Path, Version: op.Version}
	case wire.OpSetData:
		body = &wire.SetDataRequest{Path: op.Path, Data: op.Data, Version: op.Version}
	case wire.OpGetData, wire.OpGetChildren:
		body = &wire.PathWatchRequest{Path: op.Path}
	default:
		return wire.MultiOp{}, fmt.Errorf("client: %s cannot be part of a multi", op.Type)
	}
	return wire.MultiOp{Type: op.Type, Body: body}, nil
}

// Multi runs write ops atomically; the returned error is the reply header's
// (ZooKeeper puts 0 there even when an op fails: look at the results).
func (c *Conn) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	return c.multi(ctx, wire.OpMulti, ops)
}

// MultiRead runs getData/getChildren ops, each reporting its own error.
func (c *Conn) MultiRead(ctx context.Context, ops ...Op) ([]OpResult, error) {
	return c.multi(ctx, wire.OpMultiRead, ops)
}

func (c *Conn) multi(ctx context.Context, op wire.OpCode, ops []Op) ([]OpResult, error) {
	req := wire.MultiRequest{Ops: make([]wire.MultiOp, len(ops))}
	for i := range ops {
		var err error
		if req.Ops[i], err = ops[i].multiOp(); err != nil {
			return nil, err
		}
	}
	var resp wire.MultiResponse
	if _, err := c.call(ctx, op, &req, &resp); err != nil {
		return nil, err
	}
	results := make([]OpResult, len(resp.Results))
	for i, r := range resp.Results {
		res := OpResult{Type: r.Type, Err: r.Err}
		switch body := r.Body.(type) {
		case *wire.ErrorResponse:
			res.Err = body.Err
		case *wire.PathResponse:
			res.Path = body.Path
		case *wire.Create2Response:
			res.Path, res.Stat = body.Path, body.Stat
		case *wire.StatResponse:
			res.Stat = body.Stat
		case *wire.GetDataResponse:
			res.Data, res.Stat = body.Data, body.Stat
		case *wire.StringsResponse:
			res.Children = body.Strings
		}
		results[i] = res
	}
	return results, nil
}
