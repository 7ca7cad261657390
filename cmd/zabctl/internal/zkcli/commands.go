package zkcli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// command is one of zkCli's commands. local runs before the connection
// check (ZooKeeperMain's own commands); exec runs after it, with the
// options parsed.
type command struct {
	usage   string
	options optionSpec
	local   func(sh *Shell, args []string) (done bool, err error)
	exec    func(sh *Shell, ctx context.Context, p parsedArgs) error
}

var commands map[string]command

func init() {
	// Assigned in init: the command functions refer to the table (usage).
	commands = map[string]command{
		"addWatch":             {usage: "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE", options: optionSpec{"m": true}, exec: addWatchCmd},
		"addauth":              {usage: "scheme auth", exec: addAuthCmd},
		"close":                {usage: "", exec: closeCmd},
		"config":               {usage: "[-c] [-w] [-s]", options: optionSpec{"c": false, "w": false, "s": false}, exec: configCmd},
		"connect":              {usage: "host:port", local: connectCmd},
		"create":               {usage: "[-s] [-e] [-c] [-t ttl] path [data] [acl]", options: optionSpec{"s": false, "e": false, "c": false, "t": true}, exec: createCmd},
		"delete":               {usage: "[-v version] path", options: optionSpec{"v": true}, exec: deleteCmd},
		"deleteall":            {usage: "path [-b batch size]", options: optionSpec{"b": true}, exec: deleteAllCmd},
		"delquota":             {usage: "[-n|-b|-N|-B] path", options: optionSpec{"n": false, "b": false, "N": false, "B": false}, exec: delQuotaCmd},
		"get":                  {usage: "[-s] [-w] path", options: optionSpec{"s": false, "w": false}, exec: getCmd},
		"getAcl":               {usage: "[-s] path", options: optionSpec{"s": false}, exec: getACLCmd},
		"getAllChildrenNumber": {usage: "path", exec: getAllChildrenNumberCmd},
		"getEphemerals":        {usage: "path", exec: getEphemeralsCmd},
		"history":              {usage: "", local: historyCmd},
		"listquota":            {usage: "path", exec: listQuotaCmd},
		"ls":                   {usage: "[-s] [-w] [-R] path", options: optionSpec{"?": false, "s": false, "w": false, "R": false}, exec: lsCmd},
		"printwatches":         {usage: "on|off", local: printWatchesCmd},
		"quit":                 {usage: "", local: quitCmd},
		"reconfig":             {usage: "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]", options: optionSpec{"s": false, "v": true, "file": true, "members": true, "add": true, "remove": true}, exec: reconfigCmd},
		"redo":                 {usage: "cmdno", local: redoCmd},
		"removewatches":        {usage: "path [-c|-d|-a] [-l]", options: optionSpec{"c": false, "d": false, "a": false, "l": false}, exec: removeWatchesCmd},
		"set":                  {usage: "[-s] [-v version] path data", options: optionSpec{"s": false, "v": true}, exec: setCmd},
		"setAcl":               {usage: "[-s] [-v version] [-R] path acl", options: optionSpec{"s": false, "v": true, "R": false}, exec: setACLCmd},
		"setquota":             {usage: "-n|-b|-N|-B val path", options: optionSpec{"n": true, "b": true, "N": true, "B": true}, exec: setQuotaCmd},
		"stat":                 {usage: "[-w] path", options: optionSpec{"w": false}, exec: statCmd},
		"sync":                 {usage: "path", exec: syncCmd},
		"version":              {usage: "", exec: versionCmd},
		"whoami":               {usage: "", exec: whoAmICmd},
	}
}

// usageError is the error a command gives when its arguments are short.
func usageError(name string) error {
	return cliError{msg: name + " " + commands[name].usage, code: exitFailed}
}

// needArgs checks that the command line has at least n words.
func needArgs(p parsedArgs, n int) error {
	if len(p.args) < n {
		return usageError(p.args[0])
	}
	return nil
}

// intOption parses an integer option value; zkCli dies on a bad one with a
// Java stack trace, zabctl says which option.
func intOption(p parsedArgs, name string, def int64, bits int) (int64, error) {
	v, ok := p.opts[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return 0, cliError{msg: fmt.Sprintf("-%s argument must be a number: %q", name, v), code: exitFailed}
	}
	return n, nil
}

// --- ZooKeeperMain's own commands ---------------------------------------

func quitCmd(sh *Shell, args []string) (bool, error) {
	sh.Close()
	sh.quit = true
	// zkCli exits with the previous command's code.
	return true, cliError{code: sh.exitCode}
}

func redoCmd(sh *Shell, args []string) (bool, error) {
	return true, sh.redo(args)
}

func historyCmd(sh *Shell, args []string) (bool, error) {
	sh.printHistory()
	return false, nil
}

func printWatchesCmd(sh *Shell, args []string) (bool, error) {
	if len(args) == 1 {
		state := "off"
		if sh.printWatches {
			state = "on"
		}
		sh.printOut("printwatches is " + state)
	} else {
		sh.printWatches = args[1] == "on"
	}
	return false, nil
}

func connectCmd(sh *Shell, args []string) (bool, error) {
	host := sh.host
	if len(args) >= 2 {
		host = args[1]
	}
	return false, sh.Connect(host)
}

// --- session commands ---------------------------------------------------

func closeCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	return sh.sess.Close(ctx)
}

func addAuthCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	var auth []byte
	if len(p.args) >= 3 {
		auth = []byte(p.args[2])
	}
	// Like the Java client, addauth does not wait for the answer: a
	// refused identity shows as AuthFailed and a closed connection.
	sh.sess.AddAuth(ctx, p.args[1], auth)
	return nil
}

func whoAmICmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	var infos []wire.ClientInfo
	err := sh.sess.Run(ctx, func(c *client.Conn) (err error) {
		infos, err = c.WhoAmI(ctx)
		return err
	})
	if err != nil {
		return keeperError(err, "")
	}
	if sh.opts.JSON {
		list := []map[string]string{}
		for _, ci := range infos {
			list = append(list, map[string]string{"scheme": ci.AuthScheme, "user": ci.User})
		}
		sh.printJSON(map[string]any{"clientInfo": list})
		return nil
	}
	sh.printOut("Auth scheme: User")
	for _, ci := range infos {
		sh.printOut(ci.AuthScheme + ": " + ci.User)
	}
	return nil
}

func versionCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if len(p.args) > 1 {
		return usageError("version")
	}
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"version": sh.opts.Version})
		return nil
	}
	sh.printOut("ZooKeeper CLI version: " + sh.opts.Version)
	return nil
}

// --- reads --------------------------------------------------------------

func getCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	data, stat, err := sh.sess.GetData(ctx, path, p.has("w"))
	if err != nil {
		return keeperError(err, path)
	}
	if sh.opts.JSON {
		obj := map[string]any{"path": path, "stat": statJSON(stat)}
		addDataJSON(obj, data)
		sh.printJSON(obj)
		return nil
	}
	if data == nil {
		data = []byte("null")
	}
	sh.printOut(string(data))
	if p.has("s") {
		sh.printStat(stat)
	}
	return nil
}

func statCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	stat, err := sh.sess.Exists(ctx, path, p.has("w"))
	if err != nil {
		return keeperError(err, path)
	}
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"path": path, "stat": statJSON(stat)})
		return nil
	}
	sh.printStat(stat)
	return nil
}

func lsCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	watch := p.has("w")
	if p.has("R") {
		return sh.lsRecursive(ctx, path, watch)
	}
	children, stat, err := sh.sess.Children(ctx, path, watch)
	if err != nil {
		return keeperError(err, path)
	}
	slices.Sort(children)
	if sh.opts.JSON {
		obj := map[string]any{"path": path, "children": nonNil(children)}
		if p.has("s") {
			obj["stat"] = statJSON(stat)
		}
		sh.printJSON(obj)
		return nil
	}
	sh.printOut("[" + strings.Join(children, ", ") + "]")
	if p.has("s") {
		sh.printStat(stat)
	}
	return nil
}

// lsRecursive lists a subtree as ZKUtil.visitSubTreeDFS does: the node,
// then each node's sorted children before their own subtrees.
func (sh *Shell) lsRecursive(ctx context.Context, path string, watch bool) error {
	if _, _, err := sh.sess.GetData(ctx, path, watch); err != nil {
		return keeperError(err, path)
	}
	var paths []string
	emit := func(p string) {
		if sh.opts.JSON {
			paths = append(paths, p)
		} else {
			sh.printOut(p)
		}
	}
	emit(path)
	var visit func(p string) error
	visit = func(p string) error {
		children, _, err := sh.sess.Children(ctx, p, watch)
		if errors.Is(err, wire.ErrNoNode) {
			return nil // deleted while we walked
		}
		if err != nil {
			return keeperError(err, p)
		}
		slices.Sort(children)
		for _, c := range children {
			emit(childPath(p, c))
		}
		for _, c := range children {
			if err := visit(childPath(p, c)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(path); err != nil {
		return err
	}
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"path": path, "tree": paths})
	}
	return nil
}

func childPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

func getACLCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	var acl []wire.ACL
	var stat wire.Stat
	err := sh.sess.Run(ctx, func(c *client.Conn) (err error) {
		acl, stat, err = c.GetACL(ctx, path)
		return err
	})
	if err != nil {
		return keeperError(err, path)
	}
	if sh.opts.JSON {
		obj := map[string]any{"path": path, "acl": aclJSON(acl)}
		if p.has("s") {
			obj["stat"] = statJSON(stat)
		}
		sh.printJSON(obj)
		return nil
	}
	for _, a := range acl {
		// Id.toString is jute's: each string quoted with ' and escaped,
		// comma-separated, then a newline.
		sh.printOut(juteString(a.ID.Scheme) + "," + juteString(a.ID.ID) + "\n: " + permString(a.Perms))
	}
	if p.has("s") {
		sh.printStat(stat)
	}
	return nil
}

func getAllChildrenNumberCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	var n int32
	err := sh.sess.Run(ctx, func(c *client.Conn) (err error) {
		n, err = c.GetAllChildrenNumber(ctx, path)
		return err
	})
	if err != nil {
		return keeperError(err, path)
	}
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"path": path, "count": n})
		return nil
	}
	sh.printOut(strconv.Itoa(int(n)))
	return nil
}

func getEphemeralsCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	prefix := "/"
	if len(p.args) >= 2 {
		prefix = p.args[1]
		if err := validatePath(prefix); err != nil {
			return err
		}
	}
	var paths []string
	err := sh.sess.Run(ctx, func(c *client.Conn) (err error) {
		paths, err = c.GetEphemerals(ctx, prefix)
		return err
	})
	if err != nil {
		return keeperError(err, prefix)
	}
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"path": prefix, "ephemerals": nonNil(paths)})
		return nil
	}
	sh.printOut("[" + strings.Join(paths, ", ") + "]")
	return nil
}

func configCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	data, stat, err := sh.sess.GetData(ctx, configNode, p.has("w"))
	if err != nil {
		return keeperError(err, configNode)
	}
	text := "null"
	if data != nil {
		text = string(data)
	}
	if p.has("c") {
		text = clientConfig(text)
	}
	if sh.opts.JSON {
		obj := map[string]any{"config": text}
		if p.has("s") {
			obj["stat"] = statJSON(stat)
		}
		sh.printJSON(obj)
		return nil
	}
	sh.printOut(text)
	if p.has("s") {
		sh.printStat(stat)
	}
	return nil
}

const configNode = "/zookeeper/config"

// clientConfig is ConfigUtils.getClientConfigStr: the config's version and
// the servers' client addresses ("version host:port,...").
func clientConfig(cfg string) string {
	version := ""
	var addrs []string
	for _, line := range strings.Split(cfg, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch {
		case key == "version":
			version = value
		case strings.HasPrefix(key, "server."):
			if _, clientAddr, ok := strings.Cut(value, ";"); ok {
				if !strings.Contains(clientAddr, ":") {
					clientAddr = "0.0.0.0:" + clientAddr
				}
				addrs = append(addrs, clientAddr)
			}
		}
	}
	return version + " " + strings.Join(addrs, ",")
}

func syncCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	err := sh.sess.Run(ctx, func(c *client.Conn) error {
		_, err := c.Sync(ctx, path)
		return err
	})
	var code wire.ErrCode
	if errors.As(err, &code) && code != wire.ErrConnectionLoss {
		sh.printOut(fmt.Sprintf("Sync has failed. rc=%d", int32(code)))
		return nil
	}
	if err != nil {
		return keeperError(err, path)
	}
	sh.printOut("Sync is OK")
	return nil
}

// --- writes -------------------------------------------------------------

func createCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	e, s, c, t := p.has("e"), p.has("s"), p.has("c"), p.has("t")
	if c && (e || s) {
		return cliError{msg: "-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.", code: exitFailed}
	}
	var ttl int64
	if t {
		var err error
		if ttl, err = strconv.ParseInt(p.opts["t"], 10, 64); err != nil {
			return cliError{msg: "-t argument must be a long value", code: exitFailed}
		}
	}
	if t && e {
		return cliError{msg: "TTLs cannot be used with Ephemeral znodes", code: exitFailed}
	}
	if t && c {
		return cliError{msg: "TTLs cannot be used with Container znodes", code: exitFailed}
	}
	mode := wire.ModePersistent
	switch {
	case e && s:
		mode = wire.ModeEphemeralSequential
	case e:
		mode = wire.ModeEphemeral
	case s && t:
		mode = wire.ModePersistentSequentialWithTTL
	case s:
		mode = wire.ModePersistentSequential
	case c:
		mode = wire.ModeContainer
	case t:
		mode = wire.ModePersistentWithTTL
	}
	if t && (ttl <= 0 || ttl > maxTTL) {
		return cliError{msg: fmt.Sprintf("ttl must be positive and cannot be larger than: %d", maxTTL), code: exitFailed}
	}
	path := p.args[1]
	checked := path
	if s {
		checked += "1" // a sequential path may end in "/"
	}
	if err := validatePath(checked); err != nil {
		return err
	}
	var data []byte
	if len(p.args) > 2 {
		data = []byte(p.args[2])
	}
	acl := client.OpenACL
	if len(p.args) > 3 {
		acl = sh.parseACL(p.args[3])
	}
	if len(acl) == 0 {
		// The Java client refuses an empty ACL itself, with no path.
		sh.printErr("KeeperErrorCode = InvalidACL")
		return errEmptyACL
	}
	var created string
	err := sh.sess.Run(ctx, func(conn *client.Conn) (err error) {
		switch {
		case t:
			created, _, err = conn.CreateTTL(ctx, path, data, acl, mode, msDuration(ttl))
		case c:
			created, _, err = conn.CreateContainer(ctx, path, data, acl)
		default:
			created, err = conn.Create(ctx, path, data, acl, mode)
		}
		return err
	})
	if err != nil {
		if errors.Is(err, wire.ErrInvalidACL) {
			sh.printErr("KeeperErrorCode = InvalidACL for " + path)
		}
		return keeperError(err, path)
	}
	sh.printErr("Created " + created)
	return nil
}

// errEmptyACL is CliWrapperException for the client's own InvalidACL,
// which carries no path.
var errEmptyACL = cliError{msg: "Acl is not valid : null", code: exitFailed}

// maxTTL is the largest TTL ZooKeeper's ephemeral-owner encoding holds.
const maxTTL = 1<<40 - 1

func setCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 3); err != nil {
		return err
	}
	path, data := p.args[1], []byte(p.args[2])
	version, err := intOption(p, "v", -1, 32)
	if err != nil {
		return err
	}
	if err := validatePath(path); err != nil {
		return err
	}
	var stat wire.Stat
	err = sh.sess.Run(ctx, func(c *client.Conn) (err error) {
		stat, err = c.SetData(ctx, path, data, int32(version))
		return err
	})
	if err != nil {
		return keeperError(err, path)
	}
	if p.has("s") {
		sh.printStat(stat)
	}
	return nil
}

func deleteCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	if len(p.args) > 2 {
		sh.printErr("'delete path [version]' has been deprecated. Please use 'delete [-v version] path' instead.")
	}
	path := p.args[1]
	version, err := intOption(p, "v", -1, 32)
	if err != nil {
		return err
	}
	if err := validatePath(path); err != nil {
		return err
	}
	err = sh.sess.Run(ctx, func(c *client.Conn) error { return c.Delete(ctx, path, int32(version)) })
	if err != nil {
		return keeperError(err, path)
	}
	return nil
}

func deleteAllCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	batch := int64(1000)
	if v, ok := p.opts["b"]; ok {
		var err error
		if batch, err = strconv.ParseInt(v, 10, 32); err != nil {
			return cliError{msg: "-b argument must be an int value", code: exitFailed}
		}
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	tree, err := sh.listSubtree(ctx, path)
	if err != nil {
		return err
	}
	// Leaves first, in multis of batch deletes (ZKUtil.deleteInBatch); a
	// failed batch stops the rest.
	ok := true
	var ops []client.Op
	for i := len(tree) - 1; i >= 0 && ok; i-- {
		ops = append(ops, client.Op{Type: wire.OpDelete, Path: tree[i], Version: -1})
		if len(ops) == int(batch) || i == 0 {
			var results []client.OpResult
			err := sh.sess.Run(ctx, func(c *client.Conn) (err error) {
				results, err = c.Multi(ctx, ops...)
				return err
			})
			if err != nil {
				return keeperError(err, path)
			}
			for _, r := range results {
				if r.Err != wire.ErrOK {
					ok = false
				}
			}
			ops = nil
		}
	}
	if !ok {
		sh.printErr("Failed to delete some node(s) in the subtree!")
	}
	return nil
}

// listSubtree lists path and its descendants breadth first
// (ZKUtil.listSubTreeBFS).
func (sh *Shell) listSubtree(ctx context.Context, root string) ([]string, error) {
	tree := []string{root}
	for i := 0; i < len(tree); i++ {
		children, _, err := sh.sess.Children(ctx, tree[i], false)
		if err != nil {
			return nil, keeperError(err, tree[i])
		}
		for _, c := range children {
			tree = append(tree, childPath(tree[i], c))
		}
	}
	return tree, nil
}

func setACLCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 3); err != nil {
		return err
	}
	path := p.args[1]
	acl := sh.parseACL(p.args[2])
	version, err := intOption(p, "v", -1, 32)
	if err != nil {
		return err
	}
	if err := validatePath(path); err != nil {
		return err
	}
	setACL := func(target string) (stat wire.Stat, err error) {
		if len(acl) == 0 {
			return stat, wire.ErrInvalidACL // refused before sending, as the Java client does
		}
		err = sh.sess.Run(ctx, func(c *client.Conn) (err error) {
			stat, err = c.SetACL(ctx, target, acl, int32(version))
			return err
		})
		return stat, err
	}
	if p.has("R") {
		// ZKUtil.visitSubTreeDFS: failures print their message (no
		// newline, as zkCli does) and the walk goes on.
		tree, err := sh.walkDFS(ctx, path)
		if err != nil {
			return err
		}
		for _, target := range tree {
			if _, err := setACL(target); err != nil {
				if len(acl) == 0 {
					target = "" // the client's own refusal names no path
				}
				sh.writeOut(keeperMessage(err, target))
			}
		}
		return nil
	}
	stat, err := setACL(path)
	if len(acl) == 0 {
		return errEmptyACL
	}
	if err != nil {
		return keeperError(err, path)
	}
	if p.has("s") {
		sh.printStat(stat)
	}
	return nil
}

// walkDFS lists a subtree in ZKUtil.visitSubTreeDFS's order.
func (sh *Shell) walkDFS(ctx context.Context, root string) ([]string, error) {
	if _, err := sh.sess.Exists(ctx, root, false); err != nil {
		return nil, keeperError(err, root)
	}
	out := []string{root}
	var visit func(p string)
	visit = func(p string) {
		children, _, err := sh.sess.Children(ctx, p, false)
		if err != nil {
			return
		}
		slices.Sort(children)
		for _, c := range children {
			out = append(out, childPath(p, c))
		}
		for _, c := range children {
			visit(childPath(p, c))
		}
	}
	visit(root)
	return out, nil
}

func addWatchCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if len(p.args) != 2 {
		return usageError("addWatch")
	}
	mode := wire.AddWatchPersistentRecursive
	if m, ok := p.opts["m"]; ok {
		switch strings.ToUpper(m) {
		case "PERSISTENT":
			mode = wire.AddWatchPersistent
		case "PERSISTENT_RECURSIVE":
		default:
			return usageError("addWatch")
		}
	}
	path := p.args[1]
	if err := validatePath(path); err != nil {
		return err
	}
	if err := sh.sess.AddWatch(ctx, path, mode); err != nil {
		return keeperError(err, path)
	}
	return nil
}

func removeWatchesCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	t := wire.WatcherAny
	switch {
	case p.has("c"):
		t = wire.WatcherChildren
	case p.has("d"):
		t = wire.WatcherData
	}
	if err := validatePath(path); err != nil {
		return err
	}
	if err := sh.sess.RemoveWatches(ctx, path, t, p.has("l")); err != nil {
		return keeperError(err, path)
	}
	return nil
}

func reconfigCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	file, members, add, remove := p.has("file"), p.has("members"), p.has("add"), p.has("remove")
	if !(file || members) && !add && !remove {
		return usageError("reconfig")
	}
	version := int64(-1)
	if v, ok := p.opts["v"]; ok {
		var err error
		if version, err = strconv.ParseInt(v, 16, 64); err != nil {
			return cliError{msg: "-v must be followed by a long (configuration version)", code: exitFailed}
		}
	}
	if (file || members) && (add || remove) {
		return cliError{msg: "Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)", code: exitFailed}
	}
	if file && members {
		return cliError{msg: "Can't use -file and -members together (conflicting non-incremental modes)", code: exitFailed}
	}
	req := wire.ReconfigRequest{CurConfigID: version, JoiningNull: !add, LeavingNull: !remove, NewMembersNull: !(members || file)}
	req.JoiningServers = strings.ToLower(p.opts["add"])
	req.LeavingServers = strings.ToLower(p.opts["remove"])
	req.NewMembers = strings.ToLower(p.opts["members"])
	if file {
		m, err := membersFromFile(p.opts["file"])
		if err != nil {
			return cliError{msg: "Error processing " + p.opts["file"] + err.Error(), code: exitFailed}
		}
		req.NewMembers = m
	}
	var resp wire.GetDataResponse
	err := sh.sess.Run(ctx, func(c *client.Conn) error {
		r, err := c.Do(ctx, wire.OpReconfig, &req)
		if err != nil {
			return err
		}
		return r.Decode(&resp)
	})
	if err != nil {
		return keeperError(err, "")
	}
	sh.printOut("Committed new configuration:\n" + string(resp.Data))
	if p.has("s") {
		sh.printStat(resp.Stat)
	}
	return nil
}
