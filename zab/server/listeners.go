package server

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/zabd/zabd/zab"
	"github.com/zabd/zabd/zab/server/peernet"
	"github.com/zabd/zabd/zab/server/tlsconf"
)

// clientListener is one client port: the plain clientPort or the TLS
// secureClientPort.
type clientListener struct {
	net.Listener
	secure bool
}

// loadTLS reads the key and trust stores when the config serves TLS (a
// secureClientPort, or client.portUnification on the plain port), before
// anything is recovered or bound: a bad store stops start-up at once.
func (s *Server) loadTLS() error {
	if s.cfg.AdminEnabled && (s.cfg.AdminForceHTTPS || s.cfg.AdminPortUnification) {
		tc, err := tlsconf.Admin(s.cfg)
		if err != nil {
			return fmt.Errorf("admin server HTTPS: %w", err)
		}
		s.adminTLS = tc
	}
	q := &s.cfg.QuorumTLS
	if s.cfg.Distributed() && (s.cfg.SSLQuorum || q.PortUnification) {
		configs, err := tlsconf.NewQuorumConfigs(s.cfg)
		if err != nil {
			return err
		}
		s.quorumTLS = &peernet.TLS{Configs: configs.Current, Dial: s.cfg.SSLQuorum, PortUnification: q.PortUnification,
			VerifyHost: q.HostnameVerification, DetectTimeout: q.HandshakeDetectTimeout}
		s.log.Info("members speak TLS", "sslQuorum", s.cfg.SSLQuorum, "portUnification", q.PortUnification,
			"hostnameVerification", q.HostnameVerification, "reloadCertFiles", q.ReloadCertFiles, "certificate", q.KeyStore.Location)
	}
	if s.cfg.SecureClientPort == 0 && !s.cfg.TLS.PortUnification {
		return nil
	}
	tc, err := tlsconf.Server(s.cfg)
	if err != nil {
		return err
	}
	s.tls = tc
	return nil
}

// listen binds the client ports, or takes the listeners the options hand in.
func (s *Server) listen(opts Options) error {
	plain, secure := opts.Listener, opts.SecureListener
	if plain == nil && s.cfg.ClientAddr() != "" {
		l, err := bindPort("client port", "clientPort", s.cfg.ClientAddr())
		if err != nil {
			return err
		}
		plain = l
	}
	if secure == nil && s.cfg.SecureClientAddr() != "" {
		l, err := bindPort("TLS client port", "secureClientPort", s.cfg.SecureClientAddr())
		if err != nil {
			if plain != nil {
				plain.Close()
			}
			return err
		}
		secure = l
	}
	if plain == nil && secure == nil {
		return errors.New("server: no client port configured")
	}
	if plain != nil {
		s.listeners = append(s.listeners, clientListener{Listener: plain})
		s.log.Info("client port bound", "addr", plain.Addr().String())
	}
	if secure != nil {
		if s.tls == nil {
			secure.Close()
			return errors.New("server: a secure listener without a TLS configuration (secureClientPort and ssl.keyStore.location)")
		}
		s.listeners = append(s.listeners, clientListener{Listener: secure, secure: true})
		s.log.Info("TLS client port bound", "addr", secure.Addr().String())
	}
	return nil
}

// Addr is the plain client listener's address; nil when there is none.
func (s *Server) Addr() net.Addr { return s.listenerAddr(false) }

// SecureAddr is the TLS client listener's address; nil when there is none.
func (s *Server) SecureAddr() net.Addr { return s.listenerAddr(true) }

func (s *Server) listenerAddr(secure bool) net.Addr {
	for _, l := range s.listeners {
		if l.secure == secure {
			return l.Addr()
		}
	}
	return nil
}

// closeListeners stops accepting on every client port.
func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.Close()
	}
}

// acceptLoop admits connections on one client port until it closes.
func (s *Server) acceptLoop(l clientListener) {
	var readers sync.WaitGroup
	defer readers.Wait()
	for {
		nc, err := l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Error("accept failed", "err", err)
			}
			return
		}
		c := newConn(s, zab.ConnID(s.nextConn.Add(1)), nc, l.secure)
		if !s.admission.admit(c.ip) {
			s.measured.connectionRejected.Add(1)
			s.log.Warn("refusing connection: too many connections from this address",
				"remote", c.remote, "max_client_cnxns", s.cfg.MaxClientCnxns)
			nc.Close()
			continue
		}
		done := make(chan struct{})
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer s.admission.release(c.ip)
			defer close(done)
			c.readLoop()
		}()
		go c.writeLoop(done)
	}
}
