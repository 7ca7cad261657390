package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

// testEnsemble is an ensemble of in-process servers on loopback, each with
// its own data directory and ports.
type testEnsemble struct {
	t       *testing.T
	members []*testMember // by id - 1
}

type testMember struct {
	id      int64
	cfg     *config.Config
	addrs   [3]string // client, quorum, election
	running *testServer
}

// startEnsemble starts voters+observers members (observers get the
// highest ids) with ticks of 200 ms: syncLimit is a second, which a member
// slowed by the race detector on a busy machine still meets.
func startEnsemble(t *testing.T, voters, observers int, mod ...func(*config.Config)) *testEnsemble {
	t.Helper()
	return startEnsembleVia(t, voters, observers, nil, mod...)
}

// Ports of a member, as indexes of testMember.addrs.
const (
	clientPort = iota
	quorumPort
	electionPort
)

// startEnsembleVia is startEnsemble with the peer addresses the server lines
// list chosen by via (the real ones when nil): a test puts a proxy in front
// of each member's quorum and election port and lists the proxy.
func startEnsembleVia(t *testing.T, voters, observers int, via func(id int64, port int, real string) string, mod ...func(*config.Config)) *testEnsemble {
	t.Helper()
	e := &testEnsemble{t: t}
	n := voters + observers
	var servers []config.Server
	var lns [][3]net.Listener
	for i := 1; i <= n; i++ {
		var ls [3]net.Listener
		for k := range ls {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			ls[k] = l
		}
		lns = append(lns, ls)
		port := func(k int) int {
			addr := ls[k].Addr().String()
			if via != nil && k != clientPort {
				addr = via(int64(i), k, addr)
			}
			_, p, err := net.SplitHostPort(addr)
			require.NoError(t, err)
			n, err := strconv.Atoi(p)
			require.NoError(t, err)
			return n
		}
		role := config.Participant
		if i > voters {
			role = config.Observer
		}
		servers = append(servers, config.Server{ID: int64(i), Host: "127.0.0.1", QuorumPort: port(quorumPort), ElectionPort: port(electionPort),
			Role: role, ClientHost: "127.0.0.1", ClientPort: port(clientPort)})
	}
	for i := 1; i <= n; i++ {
		cfg := testConfig(filepath.Join(t.TempDir(), strconv.Itoa(i)))
		cfg.TickTime, cfg.InitLimit, cfg.SyncLimit = 200*time.Millisecond, 10, 5
		cfg.Servers, cfg.MyID = servers, int64(i)
		for _, m := range mod {
			m(cfg)
		}
		m := &testMember{id: int64(i), cfg: cfg}
		for k := range m.addrs {
			m.addrs[k] = lns[i-1][k].Addr().String()
		}
		e.members = append(e.members, m)
		e.start(m, lns[i-1])
	}
	return e
}

// start runs member m, on the given listeners or, after a stop, on new
// ones at its addresses; mod adjusts its options.
func (e *testEnsemble) start(m *testMember, lns [3]net.Listener, mod ...func(*Options)) {
	e.t.Helper()
	for k := range lns {
		if lns[k] == nil {
			l, err := net.Listen("tcp", m.addrs[k])
			require.NoError(e.t, err)
			lns[k] = l
		}
	}
	m.running = startServer(e.t, m.cfg, func(o *Options) {
		o.Listener, o.QuorumListener, o.ElectionListener = lns[0], lns[1], lns[2]
		o.Seed = uint64(m.id)
		for _, f := range mod {
			f(o)
		}
	})
}

func (e *testEnsemble) stop(id int64) {
	m := e.members[id-1]
	m.running.stop(e.t)
	m.running = nil
}

func (e *testEnsemble) restart(id int64) { e.start(e.members[id-1], [3]net.Listener{}) }

// mode is what srvr says the member is ("" while it does not serve).
func (e *testEnsemble) mode(id int64) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return zkprocess.Mode(ctx, e.members[id-1].addrs[clientPort])
}

// waitServing waits until every running member serves and one leads; it
// returns the leader's id.
func (e *testEnsemble) waitServing() int64 {
	e.t.Helper()
	var leader int64
	eventually(e.t, "every running member serves under one leader", func() bool {
		leader = 0
		for _, m := range e.members {
			if m.running == nil {
				continue
			}
			switch e.mode(m.id) {
			case "leader":
				if leader != 0 {
					return false
				}
				leader = m.id
			case "follower", "observer":
			default:
				return false
			}
		}
		return leader != 0
	})
	return leader
}

func (e *testEnsemble) client(id int64) *zk.Conn {
	e.t.Helper()
	c, _ := dialZK(e.t, e.members[id-1].addrs[0], 10*time.Second)
	return c
}

func (e *testEnsemble) mntr(id int64, name string) string {
	e.t.Helper()
	for _, line := range strings.Split(word(e.t, e.members[id-1].addrs[0], "mntr"), "\n") {
		if v, ok := strings.CutPrefix(line, "zk_"+name+"\t"); ok {
			return v
		}
	}
	return ""
}

// adminCommand fetches /commands/name from a member's admin server.
func adminCommand(t *testing.T, ts *testServer, name string) map[string]any {
	t.Helper()
	resp, err := http.Get("http://" + ts.AdminAddr().String() + "/commands/" + name)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// readAll syncs member id with its leader and returns /data's children.
func readAfterSync(t *testing.T, c *zk.Conn, path string) []string {
	t.Helper()
	_, err := c.Sync(path)
	require.NoError(t, err)
	kids, _, err := c.Children(path)
	require.NoError(t, err)
	return kids
}

func TestEnsembleServesOnEveryMember(t *testing.T) {
	e := startEnsemble(t, 3, 1, func(cfg *config.Config) {
		cfg.AdminEnabled, cfg.AdminAddress, cfg.AdminPort = true, "127.0.0.1", 0
	})
	leader := e.waitServing()
	for _, m := range e.members {
		out := adminCommand(t, m.running, "leader")
		assert.Equal(t, map[string]any{"command": "leader", "error": nil, "is_leader": m.id == leader,
			"leader_id": float64(leader), "leader_ip": "127.0.0.1"}, out, "server %d", m.id)
	}
	conf := word(t, e.members[3].addrs[clientPort], "conf")
	m4 := e.members[3].cfg.Servers[3]
	assert.Contains(t, conf, fmt.Sprintf("serverId=4\ninitLimit=10\nsyncLimit=5\nelectionAlg=3\nelectionPort=%d\nquorumPort=%d\npeerType=1\nmembership: \n",
		m4.ElectionPort, m4.QuorumPort), "conf as QuorumZooKeeperServer.dumpConf prints it")
	assert.True(t, strings.HasSuffix(conf, e.members[3].cfg.DynamicConfig()), "conf ends with the server list:\n%s", conf)
	view := adminCommand(t, e.members[0].running, "voting_view")["current_config"].(map[string]any)
	require.Len(t, view, 3, "the voters")
	assert.Equal(t, map[string]any{"serverAddresses": []any{e.members[1].cfg.Servers[1].QuorumAddr()},
		"electionAddresses": []any{e.members[1].cfg.Servers[1].ElectionAddr()}, "clientAddress": e.members[1].addrs[clientPort],
		"learnerType": "participant"}, view["2"])
	assert.Equal(t, "observer", e.mode(4))
	assert.Equal(t, "3", e.mntr(leader, "quorum_size"))
	assert.Equal(t, "3", e.mntr(leader, "learners"))
	assert.Equal(t, "2", e.mntr(leader, "synced_followers"))
	assert.Equal(t, "1", e.mntr(leader, "synced_observers"))
	assert.Equal(t, "leading - broadcast", e.mntr(leader, "peer_state"))

	clients := map[int64]*zk.Conn{}
	for id := int64(1); id <= 4; id++ {
		clients[id] = e.client(id)
	}
	_, err := clients[1].Create("/data", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for id, c := range clients {
		_, err := c.Create(fmt.Sprintf("/data/from%d", id), []byte("x"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err, "write through member %d", id)
	}
	for id, c := range clients {
		assert.ElementsMatch(t, []string{"from1", "from2", "from3", "from4"}, readAfterSync(t, c, "/data"), "read on member %d", id)
	}
	// A watch set on one member fires for a write through another.
	_, _, watch, err := clients[2].GetW("/data/from1")
	require.NoError(t, err)
	_, err = clients[3].Set("/data/from1", []byte("y"), -1)
	require.NoError(t, err)
	assert.Equal(t, zk.EventNodeDataChanged, waitEvent(t, watch).Type)
}

// The leader stops: the others elect a new one that serves every
// acknowledged write; the old leader comes back as a follower.
// writesSurviveALeaderKill writes n znodes through a follower of a
// three-member ensemble, kills the leader, and checks that the writes and
// a new one are served under the new leader; it returns the old leader,
// the new one and the follower written through.
func writesSurviveALeaderKill(t *testing.T, e *testEnsemble, n int) (leader, newLeader, other int64) {
	t.Helper()
	leader = e.waitServing()
	other = leader%3 + 1
	c := e.client(other)
	for i := range n {
		_, err := c.Create(fmt.Sprintf("/n%d", i), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	e.stop(leader)
	newLeader = e.waitServing()
	require.NotEqual(t, leader, newLeader)
	c2 := e.client(other)
	kids := readAfterSync(t, c2, "/")
	for i := range n {
		require.Contains(t, kids, fmt.Sprintf("n%d", i))
	}
	_, err := c2.Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	return leader, newLeader, other
}

func TestEnsembleSurvivesItsLeader(t *testing.T) {
	e := startEnsemble(t, 3, 0)
	leader, newLeader, other := writesSurviveALeaderKill(t, e, 20)

	e.restart(leader)
	assert.Equal(t, newLeader, e.waitServing())
	assert.Contains(t, readAfterSync(t, e.client(leader), "/"), "after")

	// The ensemble metrics saw it: two elections each, the failover's
	// unavailability, the DIFFs the new leader sent, the proposals and
	// commits the follower received.
	atLeast := func(id int64, name string, n int) {
		v, err := strconv.Atoi(e.mntr(id, name))
		require.NoError(t, err, "zk_%s on server %d", name, id)
		assert.GreaterOrEqual(t, v, n, "zk_%s on server %d", name, id)
	}
	for _, id := range []int64{newLeader, other} {
		atLeast(id, "looking_count", 2)
		atLeast(id, "cnt_election_time", 2)
		atLeast(id, "cnt_unavailable_time", 2)
	}
	atLeast(newLeader, "cnt_leader_unavailable_time", 1)
	atLeast(newLeader, "diff_count", 2)
	if other != newLeader {
		atLeast(other, "cnt_follower_sync_time", 2)
		atLeast(other, "learner_proposal_received_count", 21)
		atLeast(other, "learner_commit_received_count", 21)
	}
}

// A member that starts behind the leader's committed window gets the tree
// by SNAP, installs it durably, and recovers from it after a restart.
func TestEnsembleSnapSyncAndRestart(t *testing.T) {
	e := startEnsemble(t, 3, 0)
	leader := e.waitServing()
	late := leader%3 + 1
	e.stop(late)
	c := e.client(leader)
	for i := range 600 { // beyond the committed window of 500
		_, err := c.Create(fmt.Sprintf("/n%03d", i), []byte("d"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	e.restart(late)
	e.waitServing()
	assert.Len(t, readAfterSync(t, e.client(late), "/"), 601)
	_, err := c.Create("/after-snap", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	assert.Contains(t, readAfterSync(t, e.client(late), "/"), "after-snap")

	e.stop(late)
	e.restart(late)
	e.waitServing()
	assert.Len(t, readAfterSync(t, e.client(late), "/"), 602, "recovered from the installed snapshot and the log after it")
}

// A follower that missed more than the committed window (500 txns) is
// synchronized by DIFF from the leader's txn log while the gap is at most a
// third of the leader's newest snapshot, and by SNAP beyond that, as
// ZooKeeper 3.8's leader decides (zookeeper.snapshotSizeFactor 0.33). The
// leader's diff_count and snap_count say which it sent.
func TestEnsembleDiffFromTheLog(t *testing.T) {
	e := startEnsemble(t, 3, 0, func(c *config.Config) { c.SnapCount = 400 })
	leader := e.waitServing()
	c := e.client(leader)
	big := make([]byte, 1000)
	for i := range 1000 { // about 1 MB of tree: snapshots of about 1 MB
		_, err := c.Create(fmt.Sprintf("/n%04d", i), big, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	count := func(name string) int {
		n, err := strconv.Atoi(e.mntr(leader, name))
		require.NoError(t, err, name)
		return n
	}
	afters := 0
	lag := func(writes, size int) {
		late := leader%3 + 1
		e.stop(late)
		for i := range writes {
			_, err := c.Set(fmt.Sprintf("/n%04d", i%1000), make([]byte, size), -1)
			require.NoError(t, err)
		}
		e.restart(late)
		require.Equal(t, leader, e.waitServing())
		_, err := c.Create(fmt.Sprintf("/after-%d", afters), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		afters++
		assert.Len(t, readAfterSync(t, e.client(late), "/"), 1001+afters, "every node, /zookeeper and the new ones")
	}
	diffs, snaps := count("diff_count"), count("snap_count")
	lag(600, 100) // 600 txns of about 150 bytes: 90 KB of log against 1 MB of snapshot
	assert.Equal(t, diffs+1, count("diff_count"), "synchronized by DIFF from the log")
	assert.Equal(t, snaps, count("snap_count"))
	lag(1200, 1000) // 1.2 MB of log: more than a third of the snapshot
	assert.Equal(t, snaps+1, count("snap_count"), "synchronized by SNAP")
}

// A standalone server has no leader and an empty voting view, as
// ZooKeeper's standalone server answers.
func TestStandaloneHasNoLeader(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.AdminEnabled, cfg.AdminAddress, cfg.AdminPort = true, "127.0.0.1", 0
	ts := startServer(t, cfg)
	assert.Equal(t, map[string]any{"command": "leader", "error": "server is not initialized"}, adminCommand(t, ts, "lead"))
	assert.Equal(t, map[string]any{"command": "voting_view", "error": nil, "current_config": map[string]any{}}, adminCommand(t, ts, "voting_view"))
}
