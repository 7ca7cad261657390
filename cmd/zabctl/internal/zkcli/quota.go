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

// Quotas live under /zookeeper/quota<path>/zookeeper_limits (the limits)
// and zookeeper_stats (the server's count), as text ZooKeeper's StatsTrack
// reads and writes.
const (
	quotaRoot = "/zookeeper/quota"
	limitNode = "zookeeper_limits"
	statNode  = "zookeeper_stats"
)

// statsTrack is StatsTrack: key=value pairs, "count" and "bytes" first.
type statsTrack map[string]int64

func parseStatsTrack(s string) statsTrack {
	st := statsTrack{}
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		k, v, _ := strings.Cut(kv, "=")
		v, _, _ = strings.Cut(v, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if v == "" || err != nil {
			n = -1
		}
		st[k] = n
	}
	return st
}

func (st statsTrack) get(k string) int64 {
	if v, ok := st[k]; ok {
		return v
	}
	return -1
}

func (st statsTrack) String() string {
	s := fmt.Sprintf("count=%d,bytes=%d", st.get("count"), st.get("bytes"))
	var rest []string
	for k := range st {
		if k != "count" && k != "bytes" {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		// The extra "=" makes old parsers ignore the new keys.
		s += "="
		slices.Sort(rest)
		for _, k := range rest {
			s += fmt.Sprintf(";%s=%d", k, st[k])
		}
	}
	return s
}

// quotaFlags maps zkCli's quota options to StatsTrack keys.
var quotaFlags = []struct{ flag, key string }{{"n", "count"}, {"b", "bytes"}, {"N", "countHardLimit"}, {"B", "byteHardLimit"}}

func (sh *Shell) data(ctx context.Context, path string) ([]byte, error) {
	data, _, err := sh.sess.GetData(ctx, path, false)
	return data, err
}

func (sh *Shell) exists(ctx context.Context, path string) (bool, error) {
	_, err := sh.sess.Exists(ctx, path, false)
	if errors.Is(err, wire.ErrNoNode) {
		return false, nil
	}
	return err == nil, err
}

func (sh *Shell) create(ctx context.Context, path string, data []byte) error {
	return sh.sess.Run(ctx, func(c *client.Conn) error {
		_, err := c.Create(ctx, path, data, client.OpenACL, wire.ModePersistent)
		return err
	})
}

func (sh *Shell) setData(ctx context.Context, path string, data []byte) error {
	return sh.sess.Run(ctx, func(c *client.Conn) error {
		_, err := c.SetData(ctx, path, data, -1)
		return err
	})
}

func setQuotaCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	var set []string
	for _, f := range quotaFlags {
		if p.has(f.flag) {
			set = append(set, f.flag)
		}
	}
	switch {
	case len(set) == 0:
		return parseError("MissingOptionException", "Missing required option: [-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]")
	case len(set) > 1:
		return parseError("AlreadySelectedException", fmt.Sprintf("The option '%s' was specified but an option from this group has already been selected: '%s'", set[1], set[0]))
	}
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	if strings.HasPrefix(path, quotaRoot) {
		sh.printErr("cannot set a quota under the path: " + quotaRoot)
		return nil
	}
	quota := statsTrack{"count": -1, "bytes": -1, "countHardLimit": -1, "byteHardLimit": -1}
	for _, f := range quotaFlags {
		v, ok := p.opts[f.flag]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			sh.printErr("NumberFormatException happens when parsing the option value")
			return nil
		}
		count := f.key == "count" || f.key == "countHardLimit"
		if count && n <= 0 {
			sh.printErr("the num quota must be greater than zero")
			return nil
		}
		if !count && n < 0 {
			sh.printErr("the bytes quota must be greater than or equal to zero")
			return nil
		}
		quota[f.key] = n
	}
	if err := validatePath(path); err != nil {
		return err
	}
	if err := sh.createQuota(ctx, path, quota); err != nil {
		var ce cliError
		if errors.As(err, &ce) {
			return err
		}
		return keeperError(err, path)
	}
	return nil
}

// createQuota is SetQuotaCommand.createQuota.
func (sh *Shell) createQuota(ctx context.Context, path string, quota statsTrack) error {
	if ok, err := sh.exists(ctx, path); err != nil {
		return err
	} else if !ok {
		return cliError{msg: path + " does not exist.", code: exitFailed}
	}
	if err := sh.checkNoOtherQuota(ctx, path); err != nil {
		return err
	}
	if ok, err := sh.exists(ctx, quotaRoot); err != nil {
		return err
	} else if !ok {
		for _, p := range []string{"/zookeeper", quotaRoot} {
			if err := sh.create(ctx, p, nil); err != nil && !errors.Is(err, wire.ErrNodeExists) {
				return err
			}
		}
	}
	quotaPath := quotaRoot
	for _, part := range strings.Split(path, "/")[1:] {
		quotaPath += "/" + part
		if ok, err := sh.exists(ctx, quotaPath); err != nil {
			return err
		} else if !ok {
			if err := sh.create(ctx, quotaPath, nil); err != nil && !errors.Is(err, wire.ErrNodeExists) {
				return err
			}
		}
	}
	limitPath, statPath := quotaPath+"/"+limitNode, quotaPath+"/"+statNode
	exists, err := sh.exists(ctx, limitPath)
	if err != nil {
		return err
	}
	if !exists {
		if err := sh.create(ctx, limitPath, []byte(quota.String())); err != nil {
			return err
		}
		if err := sh.create(ctx, statPath, []byte(statsTrack{"count": 0, "bytes": 0}.String())); err != nil {
			return err
		}
		return sh.warnQuota(ctx, quota, statPath)
	}
	data, err := sh.data(ctx, limitPath)
	if err != nil {
		return err
	}
	merged := parseStatsTrack(string(data))
	for k, v := range quota {
		if v > -1 {
			merged[k] = v
		}
	}
	if err := sh.warnQuota(ctx, merged, statPath); err != nil {
		return err
	}
	return sh.setData(ctx, limitPath, []byte(merged.String()))
}

// warnQuota prints zkCli's warnings for a quota below the current usage.
func (sh *Shell) warnQuota(ctx context.Context, quota statsTrack, statPath string) error {
	data, err := sh.data(ctx, statPath)
	if err != nil {
		return err
	}
	stats := parseStatsTrack(string(data))
	below := func(limit, used int64) bool { return limit > -1 && limit < used }
	if below(quota.get("count"), stats.get("count")) || below(quota.get("countHardLimit"), stats.get("count")) {
		sh.printOut(fmt.Sprintf("[Warning]: the count quota you create is less than the existing count:%d", stats.get("count")))
	}
	if below(quota.get("bytes"), stats.get("bytes")) || below(quota.get("byteHardLimit"), stats.get("bytes")) {
		sh.printOut(fmt.Sprintf("[Warning]: the bytes quota you create is less than the existing bytes:%d", stats.get("bytes")))
	}
	return nil
}

// checkNoOtherQuota refuses a quota on a node with a quota above or below
// it (checkIfChildQuota, checkIfParentQuota).
func (sh *Shell) checkNoOtherQuota(ctx context.Context, path string) error {
	own := quotaRoot + path
	if tree, err := sh.walkDFS(ctx, own); err == nil {
		for _, qp := range tree {
			if qp == own {
				continue
			}
			children, _, err := sh.sess.Children(ctx, qp, false)
			if err == nil && slices.Contains(children, limitNode) {
				return cliError{msg: fmt.Sprintf("%s has a child %s which has a quota", path, strings.TrimPrefix(qp, quotaRoot)), code: exitFailed}
			}
		}
	}
	parts := strings.Split(path, "/")
	qp := quotaRoot
	for _, part := range parts[1 : len(parts)-1] {
		qp += "/" + part
		children, _, err := sh.sess.Children(ctx, qp, false)
		if errors.Is(err, wire.ErrNoNode) || len(children) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		if slices.Contains(children, limitNode) {
			return cliError{msg: fmt.Sprintf("%s has a parent %s which has a quota", path, strings.TrimPrefix(qp, quotaRoot)), code: exitFailed}
		}
	}
	return nil
}

func listQuotaCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	limitPath := quotaRoot + path + "/" + limitNode
	sh.printErr("absolute path is " + limitPath)
	limits, err := sh.data(ctx, limitPath)
	var stats []byte
	if err == nil {
		stats, err = sh.data(ctx, quotaRoot+path+"/"+statNode)
	}
	if errors.Is(err, wire.ErrNoNode) {
		sh.printErr("quota for " + path + " does not exist.")
		return nil
	}
	if err != nil {
		return keeperError(err, path)
	}
	quota, usage := parseStatsTrack(string(limits)), parseStatsTrack(string(stats))
	if sh.opts.JSON {
		sh.printJSON(map[string]any{"path": path, "quota": quota, "stat": usage})
		return nil
	}
	sh.printOut("Output quota for " + path + " " + quota.String())
	sh.printOut("Output stat for " + path + " " + usage.String())
	return nil
}

func delQuotaCmd(sh *Shell, ctx context.Context, p parsedArgs) error {
	var set []string
	for _, f := range quotaFlags {
		if p.has(f.flag) {
			set = append(set, f.key)
		}
	}
	if len(set) > 1 {
		return parseError("AlreadySelectedException", "only one of -n, -b, -N, -B may be given")
	}
	if err := needArgs(p, 2); err != nil {
		return err
	}
	path := p.args[1]
	err := sh.delQuota(ctx, path, set)
	if errors.Is(err, wire.ErrNoNode) {
		sh.printErr("quota for " + path + " does not exist.")
		return nil
	}
	if err != nil {
		return keeperError(err, path)
	}
	return nil
}

// delQuota is DelQuotaCommand.delQuota: without keys it removes the
// node's quota nodes (and empty quota parents); with keys it unsets them.
func (sh *Shell) delQuota(ctx context.Context, path string, keys []string) error {
	parent := quotaRoot + path
	limitPath := parent + "/" + limitNode
	if ok, err := sh.exists(ctx, limitPath); err != nil {
		return err
	} else if !ok {
		sh.printOut("Quota does not exist for " + path)
		return nil
	}
	data, err := sh.data(ctx, limitPath)
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		st := parseStatsTrack(string(data))
		for _, k := range keys {
			st[k] = -1
		}
		return sh.setData(ctx, limitPath, []byte(st.String()))
	}
	children, _, err := sh.sess.Children(ctx, parent, false)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := sh.sess.Run(ctx, func(conn *client.Conn) error { return conn.Delete(ctx, parent+"/"+c, -1) }); err != nil {
			return err
		}
	}
	// trimProcQuotas: remove quota parents left empty.
	for p := parent; p != quotaRoot; p = p[:strings.LastIndexByte(p, '/')] {
		children, _, err := sh.sess.Children(ctx, p, false)
		if err != nil {
			return err
		}
		if len(children) > 0 {
			return nil
		}
		if err := sh.sess.Run(ctx, func(conn *client.Conn) error { return conn.Delete(ctx, p, -1) }); err != nil {
			return err
		}
	}
	return nil
}
