package zkcli

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client/session"
)

// javaDate is java.util.Date.toString's layout.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// printStat prints a Stat as zkCli's StatPrinter does.
func (sh *Shell) printStat(st wire.Stat) {
	var b strings.Builder
	fmt.Fprintf(&b, "cZxid = 0x%x\n", st.Czxid)
	fmt.Fprintf(&b, "ctime = %s\n", time.UnixMilli(st.Ctime).Format(javaDate))
	fmt.Fprintf(&b, "mZxid = 0x%x\n", st.Mzxid)
	fmt.Fprintf(&b, "mtime = %s\n", time.UnixMilli(st.Mtime).Format(javaDate))
	fmt.Fprintf(&b, "pZxid = 0x%x\n", st.Pzxid)
	fmt.Fprintf(&b, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(&b, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(&b, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(&b, "ephemeralOwner = 0x%x\n", uint64(st.EphemeralOwner))
	fmt.Fprintf(&b, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(&b, "numChildren = %d\n", st.NumChildren)
	sh.writeOut(b.String())
}

func statJSON(st wire.Stat) map[string]any {
	return map[string]any{
		"czxid": st.Czxid, "mzxid": st.Mzxid, "pzxid": st.Pzxid,
		"ctime": st.Ctime, "mtime": st.Mtime,
		"version": st.Version, "cversion": st.Cversion, "aversion": st.Aversion,
		"ephemeralOwner": st.EphemeralOwner, "dataLength": st.DataLength, "numChildren": st.NumChildren,
	}
}

// addDataJSON puts data in obj: as "data" when it is UTF-8 text (null for
// a node without data), else as "dataBase64".
func addDataJSON(obj map[string]any, data []byte) {
	switch {
	case data == nil:
		obj["data"] = nil
	case utf8.Valid(data):
		obj["data"] = string(data)
	default:
		obj["dataBase64"] = base64.StdEncoding.EncodeToString(data)
	}
}

func aclJSON(acl []wire.ACL) []map[string]any {
	list := []map[string]any{}
	for _, a := range acl {
		list = append(list, map[string]any{"scheme": a.ID.Scheme, "id": a.ID.ID, "perms": permString(a.Perms)})
	}
	return list
}

func eventJSON(ev session.Event) map[string]any {
	obj := map[string]any{"state": ev.State.String(), "type": ev.Type.String()}
	if ev.Type != wire.EventNone {
		obj["path"] = ev.Path
	}
	return obj
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printJSON prints one object on one line (keys sorted, as encoding/json
// writes maps).
func (sh *Shell) printJSON(obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		sh.printErr("encode JSON: " + err.Error())
		return
	}
	sh.printOut(string(b))
}

// permString is ZKUtil.getPermString: zkCli's letters in "cdrwa" order,
// nothing for no permission.
func permString(perms int32) string {
	if perms&wire.PermAll == 0 {
		return ""
	}
	return wire.PermString(perms & wire.PermAll)
}

// juteString is how jute's ToStringOutputArchive writes a string.
func juteString(s string) string {
	r := strings.NewReplacer("\x00", "%00", "\n", "%0A", "\r", "%0D", ",", "%2C", "}", "%7D", "%", "%25")
	return "'" + r.Replace(s)
}

// parseACL is zkCli's AclParser: comma-separated scheme:id:perms, bad
// entries reported on stderr and skipped.
func (sh *Shell) parseACL(s string) []wire.ACL {
	acl := []wire.ACL{}
	for _, a := range strings.Split(s, ",") {
		first, last := strings.IndexByte(a, ':'), strings.LastIndexByte(a, ':')
		if first < 0 || first == last {
			sh.printErr(a + " does not have the form scheme:id:perm")
			continue
		}
		var perms int32
		for _, c := range a[last+1:] {
			switch c {
			case 'r':
				perms |= wire.PermRead
			case 'w':
				perms |= wire.PermWrite
			case 'c':
				perms |= wire.PermCreate
			case 'd':
				perms |= wire.PermDelete
			case 'a':
				perms |= wire.PermAdmin
			default:
				sh.printErr(fmt.Sprintf("Unknown perm type: %c", c))
			}
		}
		acl = append(acl, wire.ACL{Perms: perms, ID: wire.Id{Scheme: a[:first], ID: a[first+1 : last]}})
	}
	return acl
}

// javaCodeMessages are KeeperException.getCodeMessage's texts where they
// differ from the code's name.
var javaCodeMessages = map[wire.ErrCode]string{
	wire.ErrOK: "ok", wire.ErrNotEmpty: "Directory not empty", wire.ErrSessionExpired: "Session expired",
	wire.ErrInvalidCallback: "Invalid callback", wire.ErrSessionMoved: "Session moved",
	wire.ErrNotReadOnly: "Not a read-only call", wire.ErrEphemeralOnLocalSession: "Ephemeral node on local session",
	wire.ErrNoWatcher: "No such watcher", wire.ErrReconfigDisabled: "Reconfig is disabled",
	wire.ErrSessionClosedRequireSASL: "Session closed because client failed to authenticate",
	wire.ErrQuotaExceeded:            "Quota has exceeded", wire.ErrThrottled: "Op throttled due to high load",
}

// keeperMessage is KeeperException.getMessage for err on path.
func keeperMessage(err error, path string) string {
	var code wire.ErrCode
	if !errors.As(err, &code) {
		return err.Error()
	}
	msg, ok := javaCodeMessages[code]
	if !ok {
		msg = code.String()
	}
	msg = "KeeperErrorCode = " + msg
	if path != "" {
		msg += " for " + path
	}
	if code == wire.ErrConnectionLoss && err != error(code) {
		// Say why: the connection error the session saw.
		msg += " (" + err.Error() + ")"
	}
	return msg
}

// keeperError is CliWrapperException: zkCli's message for a failed request.
func keeperError(err error, path string) error {
	var code wire.ErrCode
	if !errors.As(err, &code) {
		return cliError{msg: err.Error(), code: exitFailed}
	}
	var msg string
	switch code {
	case wire.ErrNoNode:
		msg = "Node does not exist: " + path
	case wire.ErrNoChildrenForEphemerals:
		msg = "Ephemerals cannot have children: " + path
	case wire.ErrNodeExists:
		msg = "Node already exists: " + path
	case wire.ErrNotEmpty:
		msg = "Node not empty: " + path
	case wire.ErrNotReadOnly:
		msg = "Not a read-only call: " + path
	case wire.ErrInvalidACL:
		msg = "Acl is not valid : " + path
	case wire.ErrNoAuth:
		msg = "Insufficient permission : " + path
	case wire.ErrBadArguments:
		msg = "Arguments are not valid : " + path
	case wire.ErrBadVersion:
		msg = "version No is not valid : " + path
	case wire.ErrReconfigInProgress:
		msg = "Another reconfiguration is in progress -- concurrent reconfigs not supported (yet)"
	case wire.ErrNewConfigNoQuorum:
		msg = "No quorum of new config is connected and up-to-date with the leader of last commmitted config - try invoking reconfiguration after new servers are connected and synced"
	case wire.ErrQuotaExceeded:
		msg = "Quota has exceeded : " + path
	default:
		msg = keeperMessage(err, path)
	}
	return cliError{msg: msg, code: exitFailed}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// membersFromFile reads a dynamic config file's server lines for reconfig
// -file, as "server.N=..." joined by commas.
func membersFromFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var members []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "server.") {
			members = append(members, line)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	sort.Strings(members)
	return strings.Join(members, ","), nil
}
