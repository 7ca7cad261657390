package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/election"
	"github.com/zabd/zabd/zab/restore"
)

// ZooKeeper's defaults (QuorumPeerConfig, ZooKeeperServer, ContainerManager,
// JettyAdminServer, PrometheusMetricsProvider), which an absent key keeps —
// but for the admin server's and the metrics endpoint's addresses: ZooKeeper
// binds both to every interface (0.0.0.0), where anyone who reaches them
// may run every admin command and read every metric without credentials;
// zabd binds them to the loopback interface unless admin.serverAddress or
// metricsProvider.httpHost names another (docs/compatibility.md).
const (
	DefaultTickTime               = 3000 * time.Millisecond
	DefaultMaxClientCnxns         = 60
	DefaultSnapCount              = 100000
	DefaultSnapRetainCount        = 3
	DefaultAdminAddress           = "127.0.0.1"
	DefaultAdminPort              = 8080
	DefaultMetricsHost            = "127.0.0.1"
	DefaultMetricsPort            = 7000
	DefaultContainerCheckInterval = 60 * time.Second
	DefaultContainerMaxPerMinute  = 10000

	// minSnapRetainCount is the fewest snapshots autopurge keeps; ZooKeeper
	// raises smaller settings to it.
	minSnapRetainCount = 3
	// minSnapCount is the smallest snapCount ZooKeeper accepts; smaller
	// settings are raised to it.
	minSnapCount = 2
	// prometheusProvider is the metrics provider class that makes ZooKeeper
	// serve /metrics; naming it turns zabd's metrics endpoint on.
	prometheusProvider = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"
)

// DefaultFourLetterWords is ZooKeeper 3.8's whitelist when
// 4lw.commands.whitelist is absent.
var DefaultFourLetterWords = []string{"srvr"}

// FourLetterWords are the commands ZooKeeper 3.8 knows; a whitelist naming
// any other word draws a warning.
var FourLetterWords = []string{
	"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "hash", "isro",
	"mntr", "ruok", "srst", "srvr", "stat", "stmk", "wchc", "wchp", "wchs",
}

// Role is a server's part in an ensemble.
type Role string

// The roles a server.N line can give.
const (
	Participant Role = "participant"
	Observer    Role = "observer"
)

// Server is one `server.N=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]` line.
type Server struct {
	ID           int64
	Host         string
	QuorumPort   int
	ElectionPort int
	Role         Role
	// ClientHost and ClientPort are set when the line names a client
	// address (ClientPort 0 otherwise); ClientHost defaults to 0.0.0.0.
	ClientHost string
	ClientPort int
	Line       int
}

// QuorumAddr is the host:port peers connect to for the ZAB protocol.
func (s Server) QuorumAddr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.QuorumPort)) }

// ElectionAddr is the host:port of leader election.
func (s Server) ElectionAddr() string {
	return net.JoinHostPort(s.Host, strconv.Itoa(s.ElectionPort))
}

// Warning is something in the file that does not stop start-up but that an
// operator should see: an unknown key, a value raised to ZooKeeper's minimum,
// a setting zabd accepts but does not act on.
type Warning struct {
	Line    int
	Key     string
	Message string
}

func (w Warning) String() string { return fmt.Sprintf("line %d: %s: %s", w.Line, w.Key, w.Message) }

// Config is a parsed zoo.cfg. Durations are kept as time.Duration; the file
// gives them in milliseconds (hours for autopurge.purgeInterval).
type Config struct {
	// File is the path the configuration was read from, for messages.
	File string

	TickTime  time.Duration
	InitLimit int // ticks a follower may take to connect and sync
	SyncLimit int // ticks a follower may lag

	DataDir    string
	DataLogDir string // defaults to DataDir

	// ClientPort is 0 when the file gives none (then no client listener,
	// unless this server's server.N line names one).
	ClientPort        int
	ClientPortAddress string // "" means every interface

	// SecureClientPort is 0 when the file gives none (then no TLS listener);
	// SecureClientPortAddress "" means every interface.
	SecureClientPort        int
	SecureClientPortAddress string
	// TLS is how the secure client port (and a unified plain port) serves
	// TLS: the ssl.* keys.
	TLS TLS
	// X509AuthEnabled: the x509 authentication scheme is registered
	// (secureClientPort, or authProvider.<n> naming ZooKeeper's
	// X509AuthenticationProvider), so ACLs may name x509 ids.
	X509AuthEnabled bool
	// EnforceAuthSchemes is enforce.auth.schemes when enforce.auth.enabled
	// is true (nil otherwise): a connection must authenticate with one of
	// them before any other request (zab.Config.EnforceAuthSchemes).
	EnforceAuthSchemes []string
	enforceAuth        bool
	enforceAuthSchemes []string
	// X509SuperUser is X509AuthenticationProvider.superUser: the client
	// certificate subject that is the super user; "" for none.
	X509SuperUser string

	MaxClientCnxns    int // per client IP; 0 means no limit
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	SnapCount       int
	SnapRetainCount int
	// SnapshotSizeFactor is ZooKeeper's zookeeper.snapshotSizeFactor: a
	// leader synchronizes a learner behind its committed window from its txn
	// log while the txns total at most this fraction of its newest
	// snapshot's size, else by SNAP; negative: never from the log.
	SnapshotSizeFactor float64
	PurgeInterval      time.Duration // 0: autopurge off

	// FourLetterWordWhitelist is the list as written; "*" enables all.
	FourLetterWordWhitelist []string

	ExtendedTypesEnabled bool

	AdminEnabled bool
	AdminAddress string
	AdminPort    int
	// AdminForceHTTPS is admin.forceHttps: the admin server speaks HTTPS
	// only; AdminPortUnification is admin.portUnification: HTTP and HTTPS
	// on its one port, told apart by the first byte (forceHttps wins when
	// both are on, as in ZooKeeper's JettyAdminServer). Either serves the
	// certificate of QuorumTLS.KeyStore, as ZooKeeper 3.8's admin server
	// takes it (QuorumX509Util).
	AdminForceHTTPS      bool
	AdminPortUnification bool
	// SSLQuorum is sslQuorum: the quorum and election ports speak TLS, as
	// QuorumTLS configures it (ssl.quorum.*, and portUnification).
	SSLQuorum bool
	QuorumTLS TLS

	// MetricsEnabled is set by metricsProvider.httpPort or by naming
	// ZooKeeper's Prometheus provider class.
	MetricsEnabled bool
	MetricsHost    string
	MetricsPort    int
	// MetricsExportJvmInfo is metricsProvider.exportJvmInfo: the provider
	// also exports the process's metrics (zabd: process_* and Go's go_*).
	MetricsExportJvmInfo bool

	ForceSync bool

	SuperDigest            string // DigestAuthenticationProvider.superDigest, "user:base64(sha1)"
	ContainerCheckInterval time.Duration
	ContainerMaxPerMinute  int
	EnforceQuota           bool

	StandaloneEnabled bool
	Servers           []Server // sorted by ID
	MyID              int64    // from dataDir/myid; 0 when standalone
	// PeerType is peerType as written ("" when absent); this server's
	// server.N line decides its role, as in ZooKeeper, and a peerType that
	// disagrees draws a warning.
	PeerType     Role
	peerTypeLine int
	// Fast leader election's timing, 0 for the defaults: ZooKeeper's
	// fastleader.minNotificationInterval and maxNotificationInterval
	// (system properties), and zabd's fastleader.finalizeWait (ZooKeeper
	// fixes it at 200 ms).
	ElectionFinalizeWait            time.Duration
	ElectionMinNotificationInterval time.Duration
	ElectionMaxNotificationInterval time.Duration
	// MixedEnsemble is zabd's mixedEnsemble key: the ensemble has
	// ZooKeeper 3.8 members, and zabd follows ZooKeeper's rules where its
	// own differ (docs/compatibility.md): ZooKeeper's fixed final wait in
	// elections and its synchronization without TRUNC across epochs.
	MixedEnsemble bool
	// Groups and Weights are the hierarchical quorum of group.N and
	// weight.N (ZooKeeper's QuorumHierarchical): with any group.N line,
	// a quorum is more than half of the weight of more than half of the
	// groups of weight above 0. Quorum builds it.
	Groups  []Group
	Weights map[int64]int64
	// RunRecordFile is zabd's runRecordFile key: where the member records
	// its share of a run (zab/runlog) for zabctl view; empty, off.
	RunRecordFile string

	// SystemProperties holds every pass-through key as ZooKeeper would
	// set it: "zookeeper.<key>" → value, recognised or not.
	SystemProperties map[string]string

	Warnings []Warning

	// Lines maps each key the file sets to its (last) line, for messages
	// that name where a setting came from.
	Lines map[string]int

	// Settings finishSecurity reads across keys.
	sslAuthScheme     string // ssl.authProvider
	x509Provider      bool   // an authProvider.<n> names the x509 provider
	serverCnxnFactory string
}

// Default returns the configuration an empty zoo.cfg would give, apart from
// dataDir, which ZooKeeper requires and Default leaves empty.
func Default() *Config {
	return &Config{
		TickTime:                DefaultTickTime,
		MaxClientCnxns:          DefaultMaxClientCnxns,
		SnapCount:               DefaultSnapCount,
		SnapRetainCount:         DefaultSnapRetainCount,
		SnapshotSizeFactor:      restore.DefaultSnapshotSizeFactor,
		FourLetterWordWhitelist: slices.Clone(DefaultFourLetterWords),
		AdminEnabled:            true,
		AdminAddress:            DefaultAdminAddress,
		AdminPort:               DefaultAdminPort,
		QuorumTLS: TLS{Protocol: DefaultTLSProtocol, ClientAuth: ClientAuthNeed, HostnameVerification: true,
			HandshakeDetectTimeout: 5 * time.Second},
		MetricsHost:            DefaultMetricsHost,
		MetricsPort:            DefaultMetricsPort,
		MetricsExportJvmInfo:   true,
		ForceSync:              true,
		ContainerCheckInterval: DefaultContainerCheckInterval,
		ContainerMaxPerMinute:  DefaultContainerMaxPerMinute,
		StandaloneEnabled:      true,
		SystemProperties:       map[string]string{},
		Lines:                  map[string]int{},
	}
}

// Error is a configuration that stops start-up: which file, line and key,
// and why. Line is 0 for a problem with the file as a whole.
type Error struct {
	File string
	Line int
	Key  string
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Key != "":
		return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Key, e.Err)
	case e.Key != "":
		return fmt.Sprintf("%s: %s: %v", e.File, e.Key, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads the zoo.cfg at path and, for an ensemble, the myid file in its
// dataDir.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(bytes.NewReader(data), path)
	if err != nil {
		return nil, err
	}
	if err := cfg.readMyID(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Parse reads a zoo.cfg from r; file names it in messages. It does not read
// the myid file (Load does).
func Parse(r io.Reader, file string) (*Config, error) {
	props, err := readProperties(r, file)
	if err != nil {
		return nil, &Error{File: file, Err: err}
	}
	cfg := Default()
	cfg.File = file
	minSession, maxSession := time.Duration(-1), time.Duration(-1)
	seen := map[string]int{}
	for _, p := range props {
		if prev, dup := seen[p.Key]; dup {
			cfg.warn(p, fmt.Sprintf("set again (line %d's value is overridden)", prev))
		}
		seen[p.Key] = p.Line
		var err error
		switch {
		case p.Key == "minSessionTimeout":
			minSession, err = parseMillis(p.Value)
		case p.Key == "maxSessionTimeout":
			maxSession, err = parseMillis(p.Value)
		case strings.HasPrefix(p.Key, "server."):
			err = cfg.addServer(p)
		case strings.HasPrefix(p.Key, "group."):
			err = cfg.addGroup(p)
		case strings.HasPrefix(p.Key, "weight."):
			err = cfg.addWeight(p)
		case p.Key == "peerType":
			err = cfg.setPeerType(p)
		default:
			err = cfg.set(p)
		}
		if err != nil {
			return nil, &Error{File: file, Line: p.Line, Key: p.Key, Err: err}
		}
	}
	cfg.Lines = seen
	if err := cfg.finish(minSession, maxSession, seen); err != nil {
		return nil, err
	}
	return cfg, nil
}

// set applies one key that is not a session timeout or a server line.
func (c *Config) set(p property) error {
	if apply, ok := quorumPeerKeys[p.Key]; ok {
		return apply(c, p.Value)
	}
	if p.Key == "metricsProvider.className" {
		if p.Value == prometheusProvider {
			c.MetricsEnabled = true
		}
		return nil
	}
	if strings.HasPrefix(p.Key, "metricsProvider.") {
		return c.setMetrics(p)
	}
	if note, ok := acceptedWithoutEffect[p.Key]; ok {
		c.warn(p, note)
		return nil
	}
	// Everything else is a system property in ZooKeeper.
	c.SystemProperties["zookeeper."+p.Key] = p.Value
	if apply, ok := systemPropertyKeys[p.Key]; ok {
		return apply(c, p.Value)
	}
	// Security keys are never ignored: zabd implements them, says why one
	// has no effect, or refuses to start.
	if apply, ok := securityKeys[p.Key]; ok {
		return apply(c, p.Value)
	}
	if strings.HasPrefix(p.Key, "authProvider.") {
		return c.setAuthProvider(p)
	}
	if note, ok := securityNotes[p.Key]; ok {
		c.warn(p, note)
		return nil
	}
	if why := unsupportedSecurity(p.Key); why != "" {
		return errors.New("not supported: " + why)
	}
	c.warn(p, "unknown key, ignored (ZooKeeper would set the system property zookeeper."+p.Key+")")
	return nil
}

// warnAt adds a warning about key at the line that set it.
func (c *Config) warnAt(key, msg string) {
	c.Warnings = append(c.Warnings, Warning{Line: c.Lines[key], Key: key, Message: msg})
}

// ErrorAt is an Error about key at the line that set it (0 when the file
// does not set it).
func (c *Config) ErrorAt(key string, err error) *Error {
	return &Error{File: c.File, Line: c.Lines[key], Key: key, Err: err}
}

func (c *Config) warn(p property, msg string) {
	c.Warnings = append(c.Warnings, Warning{Line: p.Line, Key: p.Key, Message: msg})
}

// quorumPeerKeys are the keys QuorumPeerConfig itself parses.
var quorumPeerKeys = map[string]func(c *Config, v string) error{
	"tickTime":          func(c *Config, v string) error { return setMillis(&c.TickTime, v, 1) },
	"initLimit":         func(c *Config, v string) error { return setInt(&c.InitLimit, v, 0, maxInt32) },
	"syncLimit":         func(c *Config, v string) error { return setInt(&c.SyncLimit, v, 0, maxInt32) },
	"dataDir":           func(c *Config, v string) error { return setPath(&c.DataDir, v) },
	"dataLogDir":        func(c *Config, v string) error { return setPath(&c.DataLogDir, v) },
	"clientPort":        func(c *Config, v string) error { return setInt(&c.ClientPort, v, 0, 65535) },
	"clientPortAddress": func(c *Config, v string) error { return setHost(&c.ClientPortAddress, v) },
	"secureClientPort":  func(c *Config, v string) error { return setInt(&c.SecureClientPort, v, 0, 65535) },
	"secureClientPortAddress": func(c *Config, v string) error {
		return setHost(&c.SecureClientPortAddress, v)
	},
	"maxClientCnxns": func(c *Config, v string) error { return setInt(&c.MaxClientCnxns, v, 0, maxInt32) },
	"autopurge.snapRetainCount": func(c *Config, v string) error {
		return setInt(&c.SnapRetainCount, v, minInt32, maxInt32)
	},
	"autopurge.purgeInterval": func(c *Config, v string) error {
		hours, err := parseInt(v, minInt32, maxInt32)
		c.PurgeInterval = time.Duration(max(hours, 0)) * time.Hour
		return err
	},
	"standaloneEnabled": func(c *Config, v string) error { return setBool(&c.StandaloneEnabled, v) },
	"electionAlg": func(c *Config, v string) error {
		n, err := parseInt(v, minInt32, maxInt32)
		if err == nil && n != 3 {
			err = errors.New("only 3 (fast leader election) is supported")
		}
		return err
	},
}

// systemPropertyKeys are pass-through keys ("zookeeper.<key>") that zabd
// acts on.
var systemPropertyKeys = map[string]func(c *Config, v string) error{
	"snapCount": func(c *Config, v string) error { return setInt(&c.SnapCount, v, minInt32, maxInt32) },
	"snapshotSizeFactor": func(c *Config, v string) error {
		// ZooKeeper reads it with Double.parseDouble; NaN and infinities
		// have no meaning as a fraction of a size.
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", v)
		}
		c.SnapshotSizeFactor = f
		return nil
	},
	"fastleader.minNotificationInterval": func(c *Config, v string) error {
		return setMillis(&c.ElectionMinNotificationInterval, v, 1)
	},
	"fastleader.maxNotificationInterval": func(c *Config, v string) error {
		return setMillis(&c.ElectionMaxNotificationInterval, v, 1)
	},
	"fastleader.finalizeWait": func(c *Config, v string) error { return setMillis(&c.ElectionFinalizeWait, v, 1) },
	"mixedEnsemble":           func(c *Config, v string) error { return setBool(&c.MixedEnsemble, v) },
	"runRecordFile":           func(c *Config, v string) error { c.RunRecordFile = strings.TrimSpace(v); return nil },
	"4lw.commands.whitelist": func(c *Config, v string) error {
		c.FourLetterWordWhitelist = nil
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "" {
				c.FourLetterWordWhitelist = append(c.FourLetterWordWhitelist, w)
			}
		}
		return nil
	},
	"extendedTypesEnabled": func(c *Config, v string) error { return setBool(&c.ExtendedTypesEnabled, v) },
	"admin.enableServer":   func(c *Config, v string) error { return setBool(&c.AdminEnabled, v) },
	"admin.serverAddress":  func(c *Config, v string) error { return setHost(&c.AdminAddress, v) },
	"admin.serverPort":     func(c *Config, v string) error { return setInt(&c.AdminPort, v, 0, 65535) },
	"forceSync": func(c *Config, v string) error {
		// ZooKeeper syncs unless the value is "no"; zabd also refuses
		// anything but yes and no, so that a typo cannot turn fsync off.
		switch v {
		case "yes":
			c.ForceSync = true
		case "no":
			c.ForceSync = false
		default:
			return fmt.Errorf("%q is neither yes nor no", v)
		}
		return nil
	},
	"DigestAuthenticationProvider.superDigest": func(c *Config, v string) error {
		if user, digest, ok := strings.Cut(v, ":"); !ok || user == "" || digest == "" {
			return fmt.Errorf("%q is not user:base64(sha1(user:password))", v)
		}
		c.SuperDigest = v
		return nil
	},
	"znode.container.checkIntervalMs": func(c *Config, v string) error {
		return setMillis(&c.ContainerCheckInterval, v, 1)
	},
	"znode.container.maxPerMinute": func(c *Config, v string) error {
		return setInt(&c.ContainerMaxPerMinute, v, 1, maxInt32)
	},
	"enforceQuota": func(c *Config, v string) error { return setBool(&c.EnforceQuota, v) },
}

// acceptedWithoutEffect are keys of real configs that zabd parses no further:
// they draw a warning saying so rather than the unknown-key one.
var acceptedWithoutEffect = map[string]string{
	"syncEnabled":                   "accepted; zabd observers always log",
	"quorumListenOnAllIPs":          "accepted; has no effect in zabd",
	"reconfigEnabled":               "accepted; zabd does not implement reconfig",
	"localSessionsEnabled":          "accepted; zabd has only global sessions",
	"localSessionsUpgradingEnabled": "accepted; zabd has only global sessions",
	"clientPortListenBacklog":       "accepted; has no effect in zabd",
	"jute.maxbuffer":                "accepted; zabd's frame limit is fixed at 0xfffff bytes",
	"admin.commandURL":              "accepted; zabd serves /commands",
}

// setMetrics handles metricsProvider.<key>: the Prometheus provider's
// httpPort and httpHost; other provider settings are accepted and ignored.
func (c *Config) setMetrics(p property) error {
	switch strings.TrimPrefix(p.Key, "metricsProvider.") {
	case "httpPort":
		c.MetricsEnabled = true
		return setInt(&c.MetricsPort, p.Value, 0, 65535)
	case "httpHost":
		return setHost(&c.MetricsHost, p.Value)
	case "exportJvmInfo":
		// Java's Boolean.parseBoolean: anything but "true" is false.
		c.MetricsExportJvmInfo = strings.EqualFold(p.Value, "true")
		return nil
	}
	c.warn(p, "accepted; has no effect in zabd")
	return nil
}

// setPeerType parses peerType, as ZooKeeper does: observer or participant
// in any case.
func (c *Config) setPeerType(p property) error {
	switch r := Role(strings.ToLower(p.Value)); r {
	case Participant, Observer:
		c.PeerType, c.peerTypeLine = r, p.Line
		return nil
	}
	return fmt.Errorf("%q is neither participant nor observer", p.Value)
}

// addServer parses a server.N line.
func (c *Config) addServer(p property) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(p.Key, "server."), 10, 64)
	if err != nil || id < 0 {
		return fmt.Errorf("server id %q is not a non-negative integer", strings.TrimPrefix(p.Key, "server."))
	}
	for _, s := range c.Servers {
		if s.ID == id {
			return fmt.Errorf("server %d is already defined on line %d", id, s.Line)
		}
	}
	s, err := parseServer(id, p.Value)
	if err != nil {
		return err
	}
	s.Line = p.Line
	c.Servers = append(c.Servers, s)
	return nil
}

const serverFormat = "want host:quorumPort:electionPort[:participant|:observer][;[clientHost:]clientPort]"

func parseServer(id int64, v string) (Server, error) {
	s := Server{ID: id, Role: Participant}
	addr, client, hasClient := strings.Cut(v, ";")
	if strings.Contains(client, ";") {
		return s, fmt.Errorf("%q: %s", v, serverFormat)
	}
	if strings.Contains(addr, "|") {
		return s, fmt.Errorf("%q: multiple addresses per server are not supported", v)
	}
	parts, err := splitHostPorts(addr)
	if err != nil || len(parts) < 3 || len(parts) > 4 {
		return s, fmt.Errorf("%q: %s", v, serverFormat)
	}
	s.Host = parts[0]
	if s.Host == "" {
		return s, fmt.Errorf("%q: empty host", v)
	}
	if s.QuorumPort, err = parseInt(parts[1], 1, 65535); err != nil {
		return s, fmt.Errorf("quorum port: %w", err)
	}
	if s.ElectionPort, err = parseInt(parts[2], 1, 65535); err != nil {
		return s, fmt.Errorf("election port: %w", err)
	}
	if s.QuorumPort == s.ElectionPort {
		return s, fmt.Errorf("%q: quorum and election ports must differ", v)
	}
	if len(parts) == 4 {
		switch Role(strings.ToLower(parts[3])) {
		case Participant:
		case Observer:
			s.Role = Observer
		default:
			return s, fmt.Errorf("%q: role %q is neither participant nor observer", v, parts[3])
		}
	}
	if hasClient {
		cp, err := splitHostPorts(client)
		if err != nil || len(cp) > 2 {
			return s, fmt.Errorf("%q: %s", v, serverFormat)
		}
		s.ClientHost = "0.0.0.0"
		if len(cp) == 2 {
			s.ClientHost = cp[0]
		}
		if s.ClientPort, err = parseInt(cp[len(cp)-1], 1, 65535); err != nil {
			return s, fmt.Errorf("client port: %w", err)
		}
	}
	return s, nil
}

// splitHostPorts splits "host:a:b..." at colons, keeping a bracketed IPv6
// host ("[::1]:2888:3888") whole and without its brackets.
func splitHostPorts(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return nil, errors.New("unterminated [ in address")
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return []string{host}, nil
		}
		if rest[0] != ':' {
			return nil, errors.New("expected : after ]")
		}
		return append([]string{host}, strings.Split(rest[1:], ":")...), nil
	}
	return strings.Split(s, ":"), nil
}

// finish checks what spans several keys and fills in derived defaults, as
// QuorumPeerConfig does after reading the file.
func (c *Config) finish(minSession, maxSession time.Duration, seen map[string]int) error {
	fail := func(key string, err error) error {
		return &Error{File: c.File, Line: seen[key], Key: key, Err: err}
	}
	if c.DataDir == "" {
		return fail("dataDir", errors.New("is not set"))
	}
	if c.DataLogDir == "" {
		c.DataLogDir = c.DataDir
	}
	if c.ClientPort == 0 && c.ClientPortAddress != "" {
		return fail("clientPortAddress", errors.New("is set but clientPort is not"))
	}
	if minSession < 0 {
		minSession = 2 * c.TickTime
	}
	if maxSession < 0 {
		maxSession = 20 * c.TickTime
	}
	if minSession > maxSession {
		return fail("minSessionTimeout", fmt.Errorf("%d ms is larger than maxSessionTimeout %d ms",
			minSession.Milliseconds(), maxSession.Milliseconds()))
	}
	c.MinSessionTimeout, c.MaxSessionTimeout = minSession, maxSession
	if c.SnapRetainCount < minSnapRetainCount {
		c.Warnings = append(c.Warnings, Warning{Line: seen["autopurge.snapRetainCount"], Key: "autopurge.snapRetainCount",
			Message: fmt.Sprintf("%d is below the minimum, using %d", c.SnapRetainCount, minSnapRetainCount)})
		c.SnapRetainCount = minSnapRetainCount
	}
	if c.SnapCount < minSnapCount {
		c.Warnings = append(c.Warnings, Warning{Line: seen["snapCount"], Key: "snapCount",
			Message: fmt.Sprintf("%d is below the minimum, using %d", c.SnapCount, minSnapCount)})
		c.SnapCount = minSnapCount
	}
	for _, w := range c.FourLetterWordWhitelist {
		if w != "*" && !slices.Contains(FourLetterWords, w) {
			c.Warnings = append(c.Warnings, Warning{Line: seen["4lw.commands.whitelist"], Key: "4lw.commands.whitelist",
				Message: fmt.Sprintf("%q is not a four-letter word ZooKeeper knows", w)})
		}
	}
	if err := c.finishSecurity(); err != nil {
		return err
	}
	slices.SortFunc(c.Servers, func(a, b Server) int { return cmp.Compare(a.ID, b.ID) })
	if !c.Distributed() {
		if len(c.Servers) == 1 {
			c.Warnings = append(c.Warnings, Warning{Line: c.Servers[0].Line, Key: fmt.Sprintf("server.%d", c.Servers[0].ID),
				Message: "only one server is listed: running standalone"})
		}
		return nil
	}
	if c.InitLimit == 0 {
		return fail("initLimit", errors.New("is not set (required with several servers)"))
	}
	if c.SyncLimit == 0 {
		return fail("syncLimit", errors.New("is not set (required with several servers)"))
	}
	participants := 0
	for _, s := range c.Servers {
		if s.Role == Participant {
			participants++
		}
	}
	if participants == 0 {
		return &Error{File: c.File, Line: c.Servers[0].Line, Key: fmt.Sprintf("server.%d", c.Servers[0].ID),
			Err: errors.New("no participant among the servers")}
	}
	return c.checkGroups(seen)
}

// Distributed reports whether the file describes an ensemble rather than a
// standalone server: more than one server line, or one with
// standaloneEnabled=false.
func (c *Config) Distributed() bool {
	return len(c.Servers) > 1 || (len(c.Servers) == 1 && !c.StandaloneEnabled)
}

// readMyID reads dataDir/myid for an ensemble and checks that a server line
// carries that id. Its errors are *Error naming the myid file (line 1, key
// "myid"), or zoo.cfg's peerType line for a role that disagrees.
func (c *Config) readMyID() error {
	if !c.Distributed() {
		return nil
	}
	path := filepath.Join(c.DataDir, "myid")
	fail := func(err error) error { return &Error{File: path, Line: 1, Key: "myid", Err: err} }
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(fmt.Errorf("myid file is missing or unreadable (an ensemble member needs its id there): %w", err))
	}
	// ZooKeeper reads the first line only.
	first, _, _ := strings.Cut(string(data), "\n")
	first = strings.TrimSpace(first)
	id, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return fail(fmt.Errorf("%q is not a server id", first))
	}
	s, ok := c.Server(id)
	if !ok {
		ids := make([]string, len(c.Servers))
		for i, s := range c.Servers {
			ids[i] = strconv.FormatInt(s.ID, 10)
		}
		return fail(fmt.Errorf("id %d has no server.%d line in %s (its servers are %s)", id, id, c.File, strings.Join(ids, ", ")))
	}
	c.MyID = id
	if c.PeerType != "" && c.PeerType != s.Role {
		c.Warnings = append(c.Warnings, Warning{Line: c.peerTypeLine, Key: "peerType",
			Message: fmt.Sprintf("%s disagrees with server.%d on line %d (%s): the server line decides, as in ZooKeeper", c.PeerType, id, s.Line, s.Role)})
	}
	return nil
}

// DynamicConfig is the server list as ZooKeeper 3.8 prints its quorum
// configuration (QuorumMaj.toString): one server.N line per member in id
// order, with its role and the client address its line names, then the
// version in hex (0: zabd has no reconfig). Election notifications carry
// it, and NEWLEADER.
func (c *Config) DynamicConfig() string {
	var b strings.Builder
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "server.%d=%s:%d:%d:%s", s.ID, bracketHost(s.Host), s.QuorumPort, s.ElectionPort, s.Role)
		if s.ClientPort != 0 {
			fmt.Fprintf(&b, ";%s:%d", bracketHost(s.ClientHost), s.ClientPort)
		}
		b.WriteByte('\n')
	}
	if len(c.Groups) > 0 {
		// QuorumHierarchical.toString: the groups, then a weight for every
		// participant (1 where none is given), in the order ZooKeeper's
		// hash maps give small ids: ascending.
		groups := slices.Clone(c.Groups)
		slices.SortFunc(groups, func(a, b Group) int { return cmp.Compare(a.ID, b.ID) })
		for _, g := range groups {
			ids := make([]string, len(g.Members))
			for i, sid := range slices.Sorted(slices.Values(g.Members)) {
				ids[i] = strconv.FormatInt(sid, 10)
			}
			fmt.Fprintf(&b, "group.%d=%s\n", g.ID, strings.Join(ids, ":"))
		}
		for _, s := range c.Servers {
			if s.Role == Participant {
				w, given := c.Weights[s.ID]
				if !given {
					w = 1
				}
				fmt.Fprintf(&b, "weight.%d=%d\n", s.ID, w)
			}
		}
	}
	b.WriteString("version=0")
	return b.String()
}

// bracketHost puts an IPv6 address in brackets, as ZooKeeper prints it.
func bracketHost(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// Server returns the server line with the given id.
func (c *Config) Server(id int64) (Server, bool) {
	for _, s := range c.Servers {
		if s.ID == id {
			return s, true
		}
	}
	return Server{}, false
}

// ClientAddr is the address to listen on for clients: clientPortAddress and
// clientPort, or this server's client address from its server.N line; ""
// when there is none.
func (c *Config) ClientAddr() string {
	if c.ClientPort != 0 {
		host := c.ClientPortAddress
		if host == "" {
			host = "0.0.0.0"
		}
		return net.JoinHostPort(host, strconv.Itoa(c.ClientPort))
	}
	if s, ok := c.Server(c.MyID); ok && s.ClientPort != 0 {
		return net.JoinHostPort(s.ClientHost, strconv.Itoa(s.ClientPort))
	}
	return ""
}

// AdminAddr is the admin HTTP server's listen address.
func (c *Config) AdminAddr() string {
	return net.JoinHostPort(c.AdminAddress, strconv.Itoa(c.AdminPort))
}

// MetricsAddr is the Prometheus endpoint's listen address.
func (c *Config) MetricsAddr() string {
	return net.JoinHostPort(c.MetricsHost, strconv.Itoa(c.MetricsPort))
}

// FourLetterWordEnabled reports whether the whitelist admits word.
func (c *Config) FourLetterWordEnabled(word string) bool {
	return slices.Contains(c.FourLetterWordWhitelist, "*") || slices.Contains(c.FourLetterWordWhitelist, word)
}

const (
	maxInt32 = 1<<31 - 1
	minInt32 = -1 << 31
)

// parseInt parses a decimal int32 as Java's Integer.parseInt does and checks
// it against [lo, hi].
func parseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	if int(n) < lo || int(n) > hi {
		return 0, fmt.Errorf("%d is out of range [%d, %d]", n, lo, hi)
	}
	return int(n), nil
}

func setInt(dst *int, v string, lo, hi int) error {
	n, err := parseInt(v, lo, hi)
	if err == nil {
		*dst = n
	}
	return err
}

// parseMillis parses a millisecond count; negative means "unset".
func parseMillis(v string) (time.Duration, error) {
	n, err := parseInt(v, minInt32, maxInt32)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return -1, nil
	}
	return time.Duration(n) * time.Millisecond, nil
}

func setMillis(dst *time.Duration, v string, lo int) error {
	n, err := parseInt(v, lo, maxInt32)
	if err == nil {
		*dst = time.Duration(n) * time.Millisecond
	}
	return err
}

// setBool accepts true or false in any case, as ZooKeeper's parseBoolean.
func setBool(dst *bool, v string) error {
	switch strings.ToLower(v) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return fmt.Errorf("%q is neither true nor false", v)
	}
	return nil
}

func setPath(dst *string, v string) error {
	if v == "" {
		return errors.New("empty path")
	}
	*dst = v
	return nil
}

func setHost(dst *string, v string) error {
	if v == "" || strings.ContainsAny(v, " \t/") {
		return fmt.Errorf("%q is not a host name or address", v)
	}
	*dst = v
	return nil
}

// Group is one group.N line of a hierarchical quorum.
type Group struct {
	ID      int64
	Members []int64
	Line    int
}

// addGroup reads group.N=sid:sid:...
func (c *Config) addGroup(p property) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(p.Key, "group."), 10, 64)
	if err != nil {
		return fmt.Errorf("group id %q is not an integer", strings.TrimPrefix(p.Key, "group."))
	}
	g := Group{ID: id, Line: p.Line}
	for _, part := range strings.Split(p.Value, ":") {
		sid, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a server id (the members are server ids joined by ':')", part)
		}
		g.Members = append(g.Members, sid)
	}
	c.Groups = append(c.Groups, g)
	return nil
}

// addWeight reads weight.N=w.
func (c *Config) addWeight(p property) error {
	sid, err := strconv.ParseInt(strings.TrimPrefix(p.Key, "weight."), 10, 64)
	if err != nil {
		return fmt.Errorf("server id %q is not an integer", strings.TrimPrefix(p.Key, "weight."))
	}
	w, err := strconv.ParseInt(strings.TrimSpace(p.Value), 10, 64)
	if err != nil || w < 0 {
		return fmt.Errorf("%q is not a weight (an integer, 0 or more)", p.Value)
	}
	if c.Weights == nil {
		c.Weights = map[int64]int64{}
	}
	c.Weights[sid] = w
	return nil
}

// checkGroups checks a hierarchical quorum against the server lines, as
// ZooKeeper's QuorumHierarchical does and where it would fail later or not
// at all: every participant in exactly one group, a group's members and a
// weight's server participants, some group of weight above 0.
func (c *Config) checkGroups(seen map[string]int) error {
	if len(c.Groups) == 0 {
		if len(c.Weights) > 0 {
			for _, sid := range slices.Sorted(maps.Keys(c.Weights)) {
				key := fmt.Sprintf("weight.%d", sid)
				return &Error{File: c.File, Line: seen[key], Key: key, Err: errors.New("a weight without any group.N line: weights count only in a hierarchical quorum")}
			}
		}
		return nil
	}
	role := map[int64]Role{}
	for _, s := range c.Servers {
		role[s.ID] = s.Role
	}
	in := map[int64]int64{} // server -> its group
	for _, g := range c.Groups {
		key := fmt.Sprintf("group.%d", g.ID)
		for _, sid := range g.Members {
			r, ok := role[sid]
			switch {
			case !ok:
				return &Error{File: c.File, Line: g.Line, Key: key, Err: fmt.Errorf("server %d has no server.%d line", sid, sid)}
			case r != Participant:
				return &Error{File: c.File, Line: g.Line, Key: key, Err: fmt.Errorf("server %d is an observer: only participants vote", sid)}
			}
			if other, dup := in[sid]; dup {
				return &Error{File: c.File, Line: g.Line, Key: key, Err: fmt.Errorf("server %d is in group.%d already", sid, other)}
			}
			in[sid] = g.ID
		}
	}
	for _, s := range c.Servers {
		if _, ok := in[s.ID]; s.Role == Participant && !ok {
			key := fmt.Sprintf("server.%d", s.ID)
			return &Error{File: c.File, Line: s.Line, Key: key, Err: fmt.Errorf("participant %d is in no group.N line (a hierarchical quorum needs every participant in one)", s.ID)}
		}
	}
	for _, sid := range slices.Sorted(maps.Keys(c.Weights)) {
		if _, ok := in[sid]; !ok {
			key := fmt.Sprintf("weight.%d", sid)
			return &Error{File: c.File, Line: seen[key], Key: key, Err: fmt.Errorf("server %d is in no group", sid)}
		}
	}
	if _, err := c.Quorum(); err != nil {
		key := fmt.Sprintf("group.%d", c.Groups[0].ID)
		return &Error{File: c.File, Line: c.Groups[0].Line, Key: key, Err: err}
	}
	return nil
}

// Quorum is the ensemble's quorum rule: ZooKeeper's hierarchical one with
// group.N lines, nil (a majority of the participants) without.
func (c *Config) Quorum() (election.QuorumVerifier, error) {
	if len(c.Groups) == 0 {
		return nil, nil
	}
	groups := make([][]int64, len(c.Groups))
	for i, g := range c.Groups {
		groups[i] = g.Members
	}
	return election.NewHierarchical(groups, c.Weights)
}
