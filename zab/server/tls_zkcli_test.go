package server

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/zab/server/config"
	"github.com/zabd/zabd/zab/server/tlsconf/tlstest"
	"github.com/zabd/zabd/zab/server/zkprocess"
)

const zkCliPath = "/usr/share/zookeeper/bin/zkCli.sh"

// needTool skips the test when a program it drives is not installed.
func needTool(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		t.Skipf("skipping: %s is not installed (Debian's zookeeper package and a JDK)", path)
	}
}

// run runs a command, failing the test with its output on error.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
}

// zkCliClassPath is zkCli.sh's class path plus the two Netty jars the Netty
// client socket needs that Debian's zookeeper.jar manifest leaves out
// (netty-resolver, netty-codec: without them zkCli fails with
// NoClassDefFoundError io/netty/resolver/AddressResolverGroup). Given in
// CLIENT_JVMFLAGS, it overrides the script's -cp.
const zkCliClassPath = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/netty-resolver.jar:/usr/share/java/netty-codec.jar"

// zkCliSecure runs ZooKeeper's own zkCli.sh against addr over TLS, with the
// Netty client socket and the given ssl system properties, feeding it
// commands; it returns what zkCli printed for the commands: without the
// logging library's notices and the watcher's connection events, which
// zkCli's event thread prints interleaved with them at its own pace.
func zkCliSecure(t *testing.T, addr string, sslProps map[string]string, commands ...string) string {
	t.Helper()
	flags := []string{"-cp", zkCliClassPath, "-Dzookeeper.client.secure=true",
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty"}
	for k, v := range sslProps {
		flags = append(flags, "-Dzookeeper.ssl."+k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCliPath, "-server", addr)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS="+strings.Join(flags, " "), "ZOO_LOG_DIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(strings.Join(append(commands, "quit"), "\n") + "\n")
	out, _ := cmd.CombinedOutput() // zkCli's exit status says nothing; its output does
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" && line != "WATCHER::" && !strings.HasPrefix(line, "WatchedEvent state:") && !strings.HasPrefix(line, "SLF4J: ") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestZkCliOverTLSWithKeytoolStores: ZooKeeper's Java client, zkCli.sh
// with client.secure and Netty, works against zabd's secure port when every
// store is one Java's keytool made (PKCS12 key and trust stores on both
// sides, EC keys, a client certificate trusted directly); its certificate's
// subject is its x509 id; and it prints exactly what it prints against
// Debian's ZooKeeper 3.8 serving TLS with the same stores.
func TestZkCliOverTLSWithKeytoolStores(t *testing.T) {
	needTool(t, zkCliPath)
	needTool(t, "keytool")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	keypair := func(alias, dname, store, pw string, ext ...string) {
		args := []string{"-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dname,
			"-validity", "2", "-storetype", "PKCS12", "-keystore", store, "-storepass", pw, "-keypass", pw}
		for _, e := range ext {
			args = append(args, "-ext", e)
		}
		run(t, "keytool", args...)
		run(t, "keytool", "-exportcert", "-rfc", "-alias", alias, "-keystore", store, "-storepass", pw, "-file", store+".crt")
	}
	trust := func(alias, cert, store string) {
		run(t, "keytool", "-importcert", "-noprompt", "-alias", alias, "-file", cert, "-storetype", "PKCS12", "-keystore", store, "-storepass", "trustpw")
	}
	keypair("zabd", "CN=zabd", p("server.p12"), "serverpw", "SAN=dns:localhost,ip:127.0.0.1")
	keypair("zkcli", "CN=zkcli", p("client.p12"), "clientpw")
	trust("zkcli", p("client.p12.crt"), p("server-trust.p12"))
	trust("zabd", p("server.p12.crt"), p("client-trust.p12"))

	f := startTLSServer(t, func(c *config.Config) {
		c.TLS.KeyStore = config.Store{Location: p("server.p12"), Password: "serverpw"}
		c.TLS.TrustStore = config.Store{Location: p("server-trust.p12"), Password: "trustpw"}
	})
	securePort, err := zkprocess.FreePort()
	require.NoError(t, err)
	zkprocess.ForTest(t, map[string]string{
		"secureClientPort": fmt.Sprint(securePort), "secureClientPortAddress": "127.0.0.1",
		"serverCnxnFactory":     "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location": p("server.p12"), "ssl.keyStore.password": "serverpw",
		"ssl.trustStore.location": p("server-trust.p12"), "ssl.trustStore.password": "trustpw",
	})
	session := func(addr string) string {
		// The address zkCli connects to is the one line that differs.
		return strings.ReplaceAll(zkCliSecure(t, addr, map[string]string{
			"keyStore.location": p("client.p12"), "keyStore.password": "clientpw",
			"trustStore.location": p("client-trust.p12"), "trustStore.password": "trustpw",
		},
			"whoami",
			"create /viacli hello x509:CN=zkcli:cdrwa",
			"get /viacli",
			"getAcl /viacli",
			"create /auth x auth::cdrwa",
			"getAcl /auth",
		), addr, "ADDR")
	}
	ours := session(f.secureAddr)
	assert.Contains(t, ours, "x509: CN=zkcli\n", "whoami lists the certificate's id")
	assert.Contains(t, ours, "Created /viacli\n")
	assert.Contains(t, ours, "'x509,'CN=zkcli\n")
	assert.Contains(t, ours, "\nhello\n")
	assert.Equal(t, session(fmt.Sprintf("127.0.0.1:%d", securePort)), ours, "zkCli prints the same against ZooKeeper")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plain := dial(t, ctx, f.addr)
	defer plain.Close()
	_, _, err = plain.GetData(ctx, "/viacli", false)
	assert.ErrorIs(t, err, wire.ErrNoAuth, "the node is zkcli's certificate's alone")
}

// TestZkCliOverTLSWithPEMStores: the same with PEM stores: zabd's private
// key encrypted by openssl (PBES2), zkCli's key store and both trust stores
// PEM files ZooKeeper's PemReader reads.
func TestZkCliOverTLSWithPEMStores(t *testing.T) {
	needTool(t, zkCliPath)
	needTool(t, "openssl")
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "PEM CA")
	srv := ca.Server(t, "zabd")
	plainKey := tlstest.WriteFile(t, filepath.Join(dir, "server-plain.pem"), srv.PEM(t))
	encKey := filepath.Join(dir, "server.key")
	run(t, "openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", plainKey, "-out", encKey, "-passout", "pass:kpw")
	key, err := os.ReadFile(encKey)
	require.NoError(t, err)
	serverStore := tlstest.WriteFile(t, filepath.Join(dir, "server.pem"), append(tlstest.CertsPEM(srv, ca), key...))
	caPEM := tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), tlstest.CertsPEM(ca))
	cli := ca.Client(t, pkix.Name{CommonName: "pemcli"}, tlstest.Options{})
	cliStore := tlstest.WriteFile(t, filepath.Join(dir, "client.pem"), cli.PEM(t))

	f := startTLSServer(t, func(c *config.Config) {
		c.TLS.KeyStore = config.Store{Location: serverStore, Password: "kpw"}
		c.TLS.TrustStore = config.Store{Location: caPEM}
	})
	out := zkCliSecure(t, f.secureAddr, map[string]string{
		"keyStore.location": cliStore, "keyStore.type": "PEM",
		"trustStore.location": caPEM, "trustStore.type": "PEM",
	}, "whoami", "create /pem x", "ls /")
	assert.Contains(t, out, "x509: CN=pemcli\n", out)
	assert.Contains(t, out, "Created /pem\n", out)
	assert.Contains(t, out, "[pem, zookeeper]\n", out)
}
