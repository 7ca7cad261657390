package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/fourlw"
	"github.com/zabd/zabd/zab/server/metrics"
)

// httpServer is one of the optional HTTP endpoints (admin, metrics).
type httpServer struct {
	name string
	srv  *http.Server
	l    net.Listener
}

// AdminAddr and MetricsAddr are the bound addresses of the admin server and
// the metrics endpoint, nil when off.
func (s *Server) AdminAddr() net.Addr   { return s.httpAddr("admin") }
func (s *Server) MetricsAddr() net.Addr { return s.httpAddr("metrics") }

func (s *Server) httpAddr(name string) net.Addr {
	for _, h := range s.http {
		if h.name == name {
			return h.l.Addr()
		}
	}
	return nil
}

// bindHTTP binds the admin server's and the metrics endpoint's ports, as
// the config asks for them; serveHTTP serves them.
func (s *Server) bindHTTP() error {
	if s.cfg.AdminEnabled {
		mux := http.NewServeMux()
		mux.HandleFunc("/commands", s.serveCommandList)
		mux.HandleFunc("/commands/", s.serveCommand)
		if err := s.bindHTTPServer("admin", "admin server port", "admin.serverPort", s.cfg.AdminAddr(), mux); err != nil {
			return err
		}
		s.adminHTTPS()
	}
	if s.cfg.MetricsEnabled {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(s.prometheusRegistry(func() (metrics.Reading, bool) {
			st, ok := s.status()
			return st.reading, ok
		}), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
		if err := s.bindHTTPServer("metrics", "metrics port", "metricsProvider.httpPort", s.cfg.MetricsAddr(), mux); err != nil {
			return err
		}
	}
	return nil
}

// adminHTTPS puts the admin server, just bound, behind TLS with
// admin.forceHttps (or beside plain HTTP with admin.portUnification), with
// the quorum key store's certificate (loaded by loadTLS).
func (s *Server) adminHTTPS() {
	if s.adminTLS == nil {
		return
	}
	hs := s.http[len(s.http)-1]
	hs.l = adminTLSListener{Listener: hs.l, conf: s.adminTLS, unify: !s.cfg.AdminForceHTTPS}
	hs.srv.Handler = strictTransportSecurity(hs.srv.Handler)
	hs.srv.ConnContext = withConn
	mode := "HTTPS only (admin.forceHttps)"
	if !s.cfg.AdminForceHTTPS {
		mode = "HTTP and HTTPS (admin.portUnification)"
	}
	s.log.Info("admin server speaks "+mode, "certificate", s.cfg.QuorumTLS.KeyStore.Location)
}

func (s *Server) bindHTTPServer(name, what, key, addr string, h http.Handler) error {
	l, err := bindPort(what, key, addr)
	if err != nil {
		return err
	}
	s.http = append(s.http, &httpServer{name: name, l: l, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}})
	s.log.Info(name+" server listening", "addr", l.Addr().String())
	return nil
}

func (s *Server) serveHTTP() {
	for _, hs := range s.http {
		go func() {
			if err := hs.srv.Serve(hs.l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error(hs.name+" server failed", "err", err)
			}
		}()
	}
}

func (s *Server) stopHTTP() {
	for _, h := range s.http {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h.srv.Shutdown(ctx)
		cancel()
	}
}

// adminCommands maps ZooKeeper's admin command names (and the four-letter
// words, which ZooKeeper accepts as aliases) to the primary name.
var adminCommands = map[string]string{
	"ruok": "ruok", "server_stats": "server_stats", "srvr": "server_stats", "stats": "stats", "stat": "stats",
	"monitor": "monitor", "mntr": "monitor", "configuration": "configuration", "conf": "configuration",
	"connections": "connections", "cons": "connections", "connection_stat_reset": "connection_stat_reset",
	"crst": "connection_stat_reset", "stat_reset": "stat_reset", "srst": "stat_reset",
	"environment": "environment", "envi": "environment", "watch_summary": "watch_summary", "wchs": "watch_summary",
	"watches": "watches", "wchc": "watches", "watches_by_path": "watches_by_path", "wchp": "watches_by_path",
	"dump": "dump", "dirs": "dirs", "is_read_only": "is_read_only", "isro": "is_read_only",
	"digests": "digests", "hash": "digests",
	"leader": "leader", "lead": "leader", "voting_view": "voting_view",
}

func (s *Server) serveCommandList(w http.ResponseWriter, _ *http.Request) {
	var names []string
	for name, primary := range adminCommands {
		if name == primary {
			names = append(names, name)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"commands": names})
}

// serveCommand answers /commands/<name> with ZooKeeper's JSON shape: the
// command's fields plus "command" and "error".
func (s *Server) serveCommand(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/commands/")
	primary, ok := adminCommands[name]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"command": name, "error": "Unknown command: " + name})
		return
	}
	st, ok := s.status()
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"command": primary, "error": "server is stopping"})
		return
	}
	out := adminFields(primary, st)
	out["command"] = primary
	if _, failed := out["error"]; !failed {
		out["error"] = nil
	}
	writeJSON(w, http.StatusOK, out)
}

func adminFields(name string, st *statusSnapshot) map[string]any {
	stats := st.stats
	serverStats := map[string]any{
		"version": stats.Version, "read_only": false, "server_state": stats.Mode,
		"min_latency": stats.MinLatency, "avg_latency": stats.AvgLatency, "max_latency": stats.MaxLatency,
		"packets_received": stats.PacketsReceived, "packets_sent": stats.PacketsSent,
		"num_alive_client_connections": stats.AliveConnections, "outstanding_requests": stats.OutstandingRequests,
		"last_processed_zxid": stats.LastZxid, "data_dir_size": st.dataDirSize, "log_dir_size": st.logDirSize,
	}
	switch name {
	case "ruok", "connection_stat_reset", "stat_reset":
		if name == "connection_stat_reset" {
			st.ResetConnectionStats()
		} else if name == "stat_reset" {
			st.ResetServerStats()
		}
		return map[string]any{}
	case "server_stats":
		return map[string]any{"version": stats.Version, "read_only": false, "server_stats": serverStats, "node_count": stats.NodeCount}
	case "stats":
		return map[string]any{"version": stats.Version, "read_only": false, "server_stats": serverStats,
			"node_count": stats.NodeCount, "connections": connectionsJSON(st.conns)}
	case "monitor":
		m := map[string]any{}
		for _, metric := range st.Metrics() {
			switch {
			case metric.Text != "":
				m[metric.Name] = metric.Text
			case math.IsNaN(metric.Value) || math.IsInf(metric.Value, 0):
				// JSON has no NaN: Jackson quotes it, as ZooKeeper's
				// admin server shows an empty summary's quantiles.
				m[metric.Name] = fourlw.JavaDouble(metric.Value)
			default:
				m[metric.Name] = metric.Value
			}
		}
		return m
	case "configuration":
		m := map[string]any{}
		for _, kv := range st.conf {
			if kv.Key != "" { // conf's membership section is the 4lw's only
				m[kv.Key] = kv.Value
			}
		}
		return m
	case "environment":
		m := map[string]any{}
		for _, kv := range st.env {
			m[kv.Key] = kv.Value
		}
		return m
	case "connections":
		var plain, secure []fourlw.Connection
		for _, c := range st.conns {
			if c.Secure {
				secure = append(secure, c)
			} else {
				plain = append(plain, c)
			}
		}
		return map[string]any{"connections": connectionsJSON(plain), "secure_connections": connectionsJSON(secure)}
	case "watch_summary":
		sum := fourlw.SummarizeWatches(st.WatchesBySession())
		return map[string]any{"num_connections": sum.Connections, "num_paths": sum.Paths, "num_total_watches": sum.Total}
	case "watches":
		m := map[string][]string{}
		for _, sw := range st.WatchesBySession() {
			m[fmt.Sprint(sw.SessionID)] = sw.Paths
		}
		return map[string]any{"session_id_to_watched_paths": m}
	case "watches_by_path":
		m := map[string][]int64{}
		for _, pw := range st.WatchesByPath() {
			m[pw.Path] = pw.Sessions
		}
		return map[string]any{"path_to_session_ids": m}
	case "dump":
		expiry := map[string][]int64{}
		for _, set := range st.expiry {
			expiry[fmt.Sprint(set.At.UnixMilli())] = set.Sessions
		}
		eph := map[string][]string{}
		for _, e := range st.ephemerals {
			eph[fmt.Sprint(e.SessionID)] = e.Paths
		}
		return map[string]any{"expiry_time_to_session_ids": expiry, "session_id_to_ephemeral_paths": eph}
	case "dirs":
		return map[string]any{"datadir_size": st.dataDirSize, "logdir_size": st.logDirSize}
	case "is_read_only":
		return map[string]any{"read_only": false}
	case "digests":
		return map[string]any{"digests": []any{}}
	case "leader":
		return leaderFields(st)
	case "voting_view":
		return map[string]any{"current_config": votingView(st.srv.cfg)}
	}
	return map[string]any{}
}

// leaderFields is ZooKeeper's leader command: who leads, as this member
// knows it, with the leader's quorum host; an error unless the server is an
// ensemble member that serves.
func leaderFields(st *statusSnapshot) map[string]any {
	if !st.ensemble || !st.serving {
		return map[string]any{"error": "server is not initialized"}
	}
	ip := ""
	if l, ok := st.srv.cfg.Server(st.role.Leader); ok {
		ip = l.Host
	}
	return map[string]any{"is_leader": st.role.Role == zab.RoleLeading, "leader_id": st.role.Leader, "leader_ip": ip}
}

// votingView is ZooKeeper's voting_view: the participants by id, with
// their quorum, election and client addresses; empty when standalone.
func votingView(cfg *config.Config) map[string]any {
	view := map[string]any{}
	if !cfg.Distributed() {
		return view
	}
	for _, m := range cfg.Servers {
		if m.Role != config.Participant {
			continue
		}
		client := ""
		if m.ClientPort != 0 {
			client = net.JoinHostPort(m.ClientHost, strconv.Itoa(m.ClientPort))
		}
		view[strconv.FormatInt(m.ID, 10)] = map[string]any{
			"serverAddresses": []string{m.QuorumAddr()}, "electionAddresses": []string{m.ElectionAddr()},
			"clientAddress": client, "learnerType": string(m.Role),
		}
	}
	return view
}

func connectionsJSON(conns []fourlw.Connection) []map[string]any {
	out := []map[string]any{}
	for _, c := range conns {
		m := map[string]any{"remote_socket_address": c.Remote, "outstanding_requests": c.Queued,
			"packets_received": c.Received, "packets_sent": c.Sent}
		if c.HasSession {
			m["session_id"] = fmt.Sprintf("0x%x", c.SessionID)
			m["last_operation"] = c.LastOp
			m["session_timeout"] = c.Timeout.Milliseconds()
			m["last_cxid"] = fmt.Sprintf("0x%x", c.LastCxid)
			m["last_zxid"] = fmt.Sprintf("0x%x", c.LastZxid)
			m["min_latency"], m["avg_latency"], m["max_latency"] = c.MinLatency, c.AvgLatency, c.MaxLatency
		}
		out = append(out, m)
	}
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// answerFourLetterWord answers a four-letter word on the client port and
// lets the reader close the connection.
func (s *Server) answerFourLetterWord(c *conn, word string) {
	if word == wire.TelnetClose {
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if !s.cfg.FourLetterWordEnabled(word) {
		fourlw.Run(c.nc, word, nil, s.cfg.FourLetterWordEnabled)
		return
	}
	st, ok := s.status()
	if !ok {
		return
	}
	st.addAsker(c, s.handshakeTimeout)
	if err := fourlw.Run(c.nc, word, st, s.cfg.FourLetterWordEnabled); err != nil {
		s.log.Debug("four-letter word answer not delivered", "word", word, "remote", c.remote, "err", err)
	}
	s.log.Info("four-letter word answered", "word", word, "remote", c.remote)
}
