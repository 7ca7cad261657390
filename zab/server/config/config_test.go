package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, text string) (*Config, error) {
	t.Helper()
	return Parse(strings.NewReader(text), "zoo.cfg")
}

func TestDefaultsOfAMinimalFile(t *testing.T) {
	cfg, err := parse(t, "dataDir=/var/lib/zk\nclientPort=2181\n")
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, cfg.TickTime)
	assert.Equal(t, "/var/lib/zk", cfg.DataLogDir, "dataLogDir defaults to dataDir")
	assert.Equal(t, 60, cfg.MaxClientCnxns)
	assert.Equal(t, 6*time.Second, cfg.MinSessionTimeout, "2 ticks")
	assert.Equal(t, 60*time.Second, cfg.MaxSessionTimeout, "20 ticks")
	assert.Equal(t, 100000, cfg.SnapCount)
	assert.Equal(t, 3, cfg.SnapRetainCount)
	assert.Zero(t, cfg.PurgeInterval)
	assert.Equal(t, []string{"srvr"}, cfg.FourLetterWordWhitelist)
	assert.True(t, cfg.FourLetterWordEnabled("srvr"))
	assert.False(t, cfg.FourLetterWordEnabled("ruok"))
	assert.False(t, cfg.ExtendedTypesEnabled)
	assert.True(t, cfg.AdminEnabled)
	assert.Equal(t, "127.0.0.1:8080", cfg.AdminAddr(), "ZooKeeper binds 0.0.0.0; zabd the loopback interface")
	assert.Equal(t, "127.0.0.1:7000", cfg.MetricsAddr(), "ZooKeeper binds 0.0.0.0; zabd the loopback interface")
	assert.False(t, cfg.MetricsEnabled)
	assert.True(t, cfg.MetricsExportJvmInfo, "ZooKeeper's Prometheus provider exports the JVM's metrics by default")
	assert.True(t, cfg.ForceSync)
	assert.Equal(t, time.Minute, cfg.ContainerCheckInterval)
	assert.Equal(t, "0.0.0.0:2181", cfg.ClientAddr())
	assert.False(t, cfg.Distributed())
	assert.Empty(t, cfg.Warnings)
}

func TestEveryKeyOfTheIssue(t *testing.T) {
	cfg, err := parse(t, `
# a full file
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/data
dataLogDir=/datalog
clientPort=2191
clientPortAddress=127.0.0.1
maxClientCnxns=0
minSessionTimeout=1000
maxSessionTimeout=90000
snapCount=5000
snapshotSizeFactor=-1
autopurge.snapRetainCount=5
autopurge.purgeInterval=2
4lw.commands.whitelist=ruok, mntr ,stat
extendedTypesEnabled=true
admin.enableServer=false
admin.serverAddress=127.0.0.1
admin.serverPort=9090
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpPort=7001
metricsProvider.httpHost=127.0.0.1
metricsProvider.exportJvmInfo=false
forceSync=no
DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=
znode.container.checkIntervalMs=500
enforceQuota=true
`)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, cfg.TickTime)
	assert.Equal(t, 10, cfg.InitLimit)
	assert.Equal(t, 5, cfg.SyncLimit)
	assert.Equal(t, "/data", cfg.DataDir)
	assert.Equal(t, "/datalog", cfg.DataLogDir)
	assert.Equal(t, "127.0.0.1:2191", cfg.ClientAddr())
	assert.Equal(t, 0, cfg.MaxClientCnxns)
	assert.Equal(t, time.Second, cfg.MinSessionTimeout)
	assert.Equal(t, 90*time.Second, cfg.MaxSessionTimeout)
	assert.Equal(t, 5000, cfg.SnapCount)
	assert.Equal(t, -1.0, cfg.SnapshotSizeFactor)
	assert.Equal(t, 5, cfg.SnapRetainCount)
	assert.Equal(t, 2*time.Hour, cfg.PurgeInterval)
	assert.Equal(t, []string{"ruok", "mntr", "stat"}, cfg.FourLetterWordWhitelist)
	assert.True(t, cfg.ExtendedTypesEnabled)
	assert.False(t, cfg.AdminEnabled)
	assert.Equal(t, "127.0.0.1:9090", cfg.AdminAddr())
	assert.True(t, cfg.MetricsEnabled)
	assert.Equal(t, "127.0.0.1:7001", cfg.MetricsAddr())
	assert.False(t, cfg.MetricsExportJvmInfo)
	assert.False(t, cfg.ForceSync)
	assert.Equal(t, "super:D/InIHSb7yEEbrWz8b9l71RjZJU=", cfg.SuperDigest)
	assert.Equal(t, 500*time.Millisecond, cfg.ContainerCheckInterval)
	assert.True(t, cfg.EnforceQuota)
	assert.Equal(t, "true", cfg.SystemProperties["zookeeper.enforceQuota"])
	assert.Equal(t, "no", cfg.SystemProperties["zookeeper.forceSync"])
	assert.Empty(t, cfg.Warnings)
}

func TestPropertiesSyntax(t *testing.T) {
	cfg, err := parse(t, "! bang comment\n  dataDir : /a\\\n   /b\ntickTime 1500\nclientPort\t=\t2181  \n4lw.commands.whitelist=*\n")
	require.NoError(t, err)
	assert.Equal(t, "/a/b", cfg.DataDir, "continuation lines join with leading blanks dropped")
	assert.Equal(t, 1500*time.Millisecond, cfg.TickTime, "a blank separates key and value")
	assert.Equal(t, 2181, cfg.ClientPort)
	assert.True(t, cfg.FourLetterWordEnabled("dump"))
}

func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, text, key, contains string
		line                      int
	}{
		{"unknown key", "dataDir=/d\nfrobnicate=1\n", "frobnicate", "unknown key", 2},
		{"duplicate", "dataDir=/d\ndataDir=/e\n", "dataDir", "line 1", 2},
		{"retain below minimum", "dataDir=/d\nautopurge.snapRetainCount=1\n", "autopurge.snapRetainCount", "minimum", 2},
		{"snapCount below minimum", "dataDir=/d\nsnapCount=1\n", "snapCount", "minimum", 2},
		{"unknown 4lw", "dataDir=/d\n4lw.commands.whitelist=ruok,xyzw\n", "4lw.commands.whitelist", "xyzw", 2},
		{"accepted without effect", "dataDir=/d\nreconfigEnabled=true\n", "reconfigEnabled", "reconfig", 2},
		{"single server runs standalone", "dataDir=/d\nserver.1=localhost:2888:3888\n", "server.1", "standalone", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.text)
			require.NoError(t, err)
			require.Len(t, cfg.Warnings, 1)
			w := cfg.Warnings[0]
			assert.Equal(t, tc.key, w.Key)
			assert.Equal(t, tc.line, w.Line)
			assert.Contains(t, w.Message, tc.contains)
		})
	}
}

func TestBadValuesNameKeyAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"non-integer", "dataDir=/d\ntickTime=fast\n", `zoo.cfg:2: tickTime: "fast" is not an integer`},
		{"zero tick", "dataDir=/d\ntickTime=0\n", "zoo.cfg:2: tickTime: 0 is out of range"},
		{"port range", "dataDir=/d\nclientPort=70000\n", "zoo.cfg:2: clientPort: 70000 is out of range"},
		{"bad bool", "dataDir=/d\nextendedTypesEnabled=yes\n", `zoo.cfg:2: extendedTypesEnabled: "yes" is neither true nor false`},
		{"bad forceSync", "dataDir=/d\nforceSync=false\n", `zoo.cfg:2: forceSync: "false" is neither yes nor no`},
		{"bad snapshotSizeFactor", "dataDir=/d\nsnapshotSizeFactor=third\n", `zoo.cfg:2: snapshotSizeFactor: "third" is not a number`},
		{"bad superDigest", "dataDir=/d\nDigestAuthenticationProvider.superDigest=nocolon\n", "zoo.cfg:2: DigestAuthenticationProvider.superDigest"},
		{"bad container interval", "dataDir=/d\nznode.container.checkIntervalMs=-5\n", "zoo.cfg:2: znode.container.checkIntervalMs"},
		{"electionAlg", "dataDir=/d\nelectionAlg=1\n", "zoo.cfg:2: electionAlg: only 3"},
		{"no dataDir", "clientPort=2181\n", "zoo.cfg: dataDir: is not set"},
		{"address without port", "dataDir=/d\nclientPortAddress=127.0.0.1\n", "zoo.cfg:2: clientPortAddress: is set but clientPort is not"},
		{"min above max", "dataDir=/d\nminSessionTimeout=9000\nmaxSessionTimeout=4000\n", "zoo.cfg:2: minSessionTimeout: 9000 ms is larger than maxSessionTimeout 4000 ms"},
		{"bad escape", "dataDir=/d\\u12\n", `zoo.cfg:1: dataDir: malformed \u escape`},
		{"server format", "dataDir=/d\nserver.1=host:2888\n", "zoo.cfg:2: server.1: \"host:2888\": want host:quorumPort:electionPort"},
		{"server id", "dataDir=/d\nserver.x=h:1:2\n", `zoo.cfg:2: server.x: server id "x"`},
		{"server same ports", "dataDir=/d\nserver.1=h:2888:2888\n", "quorum and election ports must differ"},
		{"server role", "dataDir=/d\nserver.1=h:2888:3888:leader\n", `role "leader"`},
		{"server dup", "dataDir=/d\nserver.1=h:1:2\nserver.1=h:3:4\n", "zoo.cfg:3: server.1: server 1 is already defined on line 2"},
		{"server client port", "dataDir=/d\nserver.1=h:1:2;x\n", "client port"},
		{"ensemble without initLimit", "dataDir=/d\nsyncLimit=2\nserver.1=a:1:2\nserver.2=b:1:2\n", "zoo.cfg: initLimit: is not set"},
		{"only observers", "dataDir=/d\ninitLimit=5\nsyncLimit=2\nserver.1=a:1:2:observer\nserver.2=b:1:2:observer\n", "no participant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var cfgErr *Error
			assert.ErrorAs(t, err, &cfgErr)
		})
	}
}

func TestServerLines(t *testing.T) {
	cfg, err := parse(t, `dataDir=/d
initLimit=5
syncLimit=2
server.3=[::1]:2890:3890:observer;[::1]:2183
server.1=zk1:2888:3888;2181
server.2=zk2:2889:3889:participant;127.0.0.1:2182
`)
	require.NoError(t, err)
	require.True(t, cfg.Distributed())
	require.Len(t, cfg.Servers, 3)
	assert.Equal(t, Server{ID: 1, Host: "zk1", QuorumPort: 2888, ElectionPort: 3888, Role: Participant, ClientHost: "0.0.0.0", ClientPort: 2181, Line: 5}, cfg.Servers[0])
	assert.Equal(t, Server{ID: 2, Host: "zk2", QuorumPort: 2889, ElectionPort: 3889, Role: Participant, ClientHost: "127.0.0.1", ClientPort: 2182, Line: 6}, cfg.Servers[1])
	assert.Equal(t, Server{ID: 3, Host: "::1", QuorumPort: 2890, ElectionPort: 3890, Role: Observer, ClientHost: "::1", ClientPort: 2183, Line: 4}, cfg.Servers[2])
	assert.Equal(t, "[::1]:2890", cfg.Servers[2].QuorumAddr())
	assert.Equal(t, "zk1:3888", cfg.Servers[0].ElectionAddr())
	assert.Equal(t, "server.1=zk1:2888:3888:participant;0.0.0.0:2181\n"+
		"server.2=zk2:2889:3889:participant;127.0.0.1:2182\n"+
		"server.3=[::1]:2890:3890:observer;[::1]:2183\n"+
		"version=0", cfg.DynamicConfig(), "ZooKeeper's QuorumMaj.toString")
}

func TestLoadReadsMyID(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "zoo.cfg")
	myid := filepath.Join(dir, "myid")
	text := "dataDir=" + dir + "\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889;127.0.0.1:2182\n"
	require.NoError(t, os.WriteFile(cfgPath, []byte(text), 0o644))

	for _, tc := range []struct {
		name, myid, want string // myid "" leaves the file out
	}{
		{"missing", "", myid + ":1: myid: myid file is missing"},
		{"not a number", "two\n", myid + `:1: myid: "two" is not a server id`},
		{"empty", "\n", myid + `:1: myid: "" is not a server id`},
		{"not listed", "7\n", myid + ":1: myid: id 7 has no server.7 line in " + cfgPath + " (its servers are 1, 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(myid)
			if tc.myid != "" {
				require.NoError(t, os.WriteFile(myid, []byte(tc.myid), 0o644))
			}
			_, err := Load(cfgPath)
			require.ErrorContains(t, err, tc.want)
			var cfgErr *Error
			require.ErrorAs(t, err, &cfgErr)
			assert.Equal(t, "myid", cfgErr.Key)
		})
	}

	require.NoError(t, os.WriteFile(myid, []byte("2\nanything after the first line is ignored\n"), 0o644))
	cfg, err := Load(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, int64(2), cfg.MyID)
	assert.Equal(t, "127.0.0.1:2182", cfg.ClientAddr(), "the client address comes from this server's line")
}

func TestElectionTiming(t *testing.T) {
	cfg, err := parse(t, "dataDir=/d\nfastleader.finalizeWait=50\nfastleader.minNotificationInterval=25\nfastleader.maxNotificationInterval=2000\n")
	require.NoError(t, err)
	assert.Equal(t, 50*time.Millisecond, cfg.ElectionFinalizeWait)
	assert.Equal(t, 25*time.Millisecond, cfg.ElectionMinNotificationInterval)
	assert.Equal(t, 2*time.Second, cfg.ElectionMaxNotificationInterval)
	assert.Equal(t, "25", cfg.SystemProperties["zookeeper.fastleader.minNotificationInterval"], "ZooKeeper's system property too")
	assert.Empty(t, cfg.Warnings)
	_, err = parse(t, "dataDir=/d\nfastleader.finalizeWait=0\n")
	require.ErrorContains(t, err, "zoo.cfg:2: fastleader.finalizeWait: 0 is out of range")
}

func TestMixedEnsemble(t *testing.T) {
	cfg, err := parse(t, "dataDir=/d\n")
	require.NoError(t, err)
	assert.False(t, cfg.MixedEnsemble, "off by default")
	cfg, err = parse(t, "dataDir=/d\nmixedEnsemble=TRUE\n")
	require.NoError(t, err)
	assert.True(t, cfg.MixedEnsemble)
	assert.Empty(t, cfg.Warnings)
	_, err = parse(t, "dataDir=/d\nmixedEnsemble=yes\n")
	require.ErrorContains(t, err, "zoo.cfg:2: mixedEnsemble:")
}

func TestPeerType(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "zoo.cfg")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "myid"), []byte("3"), 0o644))
	servers := "initLimit=5\nsyncLimit=2\nserver.1=a:1:2\nserver.2=b:1:2\nserver.3=c:1:2:observer\n"

	require.NoError(t, os.WriteFile(cfgPath, []byte("dataDir="+dir+"\npeerType=OBSERVER\n"+servers), 0o644))
	cfg, err := Load(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, Observer, cfg.PeerType)
	assert.Empty(t, cfg.Warnings, "peerType agrees with server.3")

	require.NoError(t, os.WriteFile(cfgPath, []byte("dataDir="+dir+"\npeerType=participant\n"+servers), 0o644))
	cfg, err = Load(cfgPath)
	require.NoError(t, err)
	require.Len(t, cfg.Warnings, 1)
	assert.Equal(t, Warning{Line: 2, Key: "peerType", Message: "participant disagrees with server.3 on line 7 (observer): the server line decides, as in ZooKeeper"}, cfg.Warnings[0])

	_, err = parse(t, "dataDir=/d\npeerType=leader\n")
	require.EqualError(t, err, `zoo.cfg:2: peerType: "leader" is neither participant nor observer`)
}

func TestStandaloneNeedsNoMyID(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "zoo.cfg")
	require.NoError(t, os.WriteFile(cfgPath, []byte("dataDir="+dir+"\nclientPort=2181\n"), 0o644))
	cfg, err := Load(cfgPath)
	require.NoError(t, err)
	assert.Zero(t, cfg.MyID)
	assert.Equal(t, cfgPath, cfg.File)
}

// FuzzParse checks that no file makes the parser panic, and that a file it
// accepts has the invariants start-up relies on.
func FuzzParse(f *testing.F) {
	f.Add("dataDir=/d\nclientPort=2181\n")
	f.Add("tickTime=2000\ndataDir=/d\nserver.1=[::1]:1:2:observer;[::1]:3\nserver.2=a:1:2\ninitLimit=1\nsyncLimit=1\n")
	f.Add("dataDir=/a\\\n b\\u0041\nminSessionTimeout=-1\n4lw.commands.whitelist=*\n")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := Parse(strings.NewReader(text), "fuzz.cfg")
		if err != nil {
			return
		}
		if cfg.DataDir == "" || cfg.DataLogDir == "" {
			t.Fatalf("accepted a config without dataDir: %+v", cfg)
		}
		if cfg.TickTime <= 0 || cfg.MinSessionTimeout > cfg.MaxSessionTimeout {
			t.Fatalf("accepted inconsistent timing: %+v", cfg)
		}
		if cfg.SnapRetainCount < minSnapRetainCount || cfg.SnapCount < minSnapCount {
			t.Fatalf("accepted counts below ZooKeeper's minimum: %+v", cfg)
		}
		for i := 1; i < len(cfg.Servers); i++ {
			if cfg.Servers[i-1].ID >= cfg.Servers[i].ID {
				t.Fatalf("servers not sorted and unique: %+v", cfg.Servers)
			}
		}
	})
}
