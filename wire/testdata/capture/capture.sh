#!/bin/bash
# Re-record wire's golden vectors from Debian's ZooKeeper 3.8.0, on 127.0.0.1 only.
#
#   bash wire/testdata/capture/capture.sh [client|peer|all]   (from the repository root)
#
# client: a private standalone server with a fresh dataDir; go-zookeeper/zk,
#   the Java client (GoldenDriver.java, plus a SASL login), kazoo and zkCli.sh
#   run through the recording proxy. Rewrites wire/testdata/golden/client/:
#   one frame log per connection, the server's txn log, manifest.json.
# peer: a two-server ensemble whose election and quorum connections run
#   through raw-logging proxies. Rewrites wire/testdata/golden/peer/.
#
# Ports: ZK_PORT (21810), PROXY_PORT (21811), PEER_PORT_BASE (21920, uses
# base..base+52). Session ids, zxids, times and digests change on every run,
# so the expected values in golden_fields_test.go and peer_golden_test.go
# must be updated after re-recording.
set -eu
PART=${1:-all}
ZK_PORT=${ZK_PORT:-21810}
PROXY_PORT=${PROXY_PORT:-21811}
PEER_PORT_BASE=${PEER_PORT_BASE:-21920}
ROOT=$(pwd)
HERE=$ROOT/wire/testdata/capture
GOLDEN=${GOLDEN:-$ROOT/wire/testdata/golden} # override to record elsewhere
WORK=$(mktemp -d /tmp/wire-capture.XXXXXX)
JARS=$(ls /usr/share/java/*.jar | tr '\n' :)
PIDS=""

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# fourletter PORT WORD: send a four-letter command and print the answer.
fourletter() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf $2 >&3 && cat <&3"
}

# free PORT...: fail if anything answers on one of the ports.
free() {
	for port in "$@"; do
		if timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
			echo "port $port is in use; see the port variables at the top of $0" >&2
			exit 1
		fi
	done
}

go build -o "$WORK/capture" ./wire/testdata/capture

capture_client() {
	free "$ZK_PORT" "$PROXY_PORT"
	local proxy=127.0.0.1:$PROXY_PORT frames=$WORK/client-frames
	mkdir -p "$WORK/data" "$frames" "$WORK/classes"
	cat >"$WORK/zoo.cfg" <<CFG
tickTime=2000
dataDir=$WORK/data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
extendedTypesEnabled=true
authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
CFG
	cat >"$WORK/jaas-server.conf" <<CFG
Server {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  user_bob="bobsecret";
};
CFG
	cat >"$WORK/jaas-client.conf" <<CFG
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="bob"
  password="bobsecret";
};
CFG
	java -cp "$JARS" -Djava.security.auth.login.config="$WORK/jaas-server.conf" -Dzookeeper.log.dir="$WORK" \
		org.apache.zookeeper.server.ZooKeeperServerMain "$WORK/zoo.cfg" >"$WORK/server.log" 2>&1 &
	local zk=$!
	PIDS="$PIDS $zk"
	go build -o "$WORK/gozk" ./wire/testdata/capture/gozk
	javac -proc:none -implicit:none -d "$WORK/classes" -cp "$JARS" "$HERE/java/org/apache/zookeeper/GoldenDriver.java"
	for _ in $(seq 1 30); do
		if [ "$(fourletter "$ZK_PORT" ruok 2>/dev/null || true)" = imok ]; then break; fi
		sleep 1
	done
	kill -0 "$zk"

	# run SESSION COMMAND: relay one driver's traffic through a fresh proxy;
	# the command finds the proxy's pid in $PROXY_PID.
	run() {
		"$WORK/capture" proxy -listen "$proxy" -target "127.0.0.1:$ZK_PORT" -out "$frames" -session "$1" 2>>"$WORK/proxy.log" &
		PROXY_PID=$!
		PIDS="$PIDS $PROXY_PID"
		sleep 1
		# The manifest names the command as this script runs it ($proxy is
		# 127.0.0.1:PROXY_PORT, PROXY_PID the proxy's pid).
		printf '%s\t%s\n' "$1" "capture.sh client: $2" >>"$WORK/commands.txt"
		eval "$2" >>"$WORK/drivers.log" 2>&1
		sleep 1
		kill "$PROXY_PID"
		wait "$PROXY_PID" 2>/dev/null || true
	}
	run gozk '"$WORK/gozk" -server $proxy -proxy-pid $PROXY_PID'
	run java 'java -cp "$WORK/classes:$JARS" org.apache.zookeeper.GoldenDriver main $proxy $PROXY_PID'
	run sasl 'java -cp "$WORK/classes:$JARS" -Djava.security.auth.login.config=$WORK/jaas-client.conf org.apache.zookeeper.GoldenDriver sasl $proxy'
	run kazoo '/usr/bin/python3 $HERE/kazoo_driver.py $proxy $PROXY_PID'
	for c in "create /golden/zkcli z" "addWatch -m PERSISTENT /golden/zkcli" "getEphemerals /golden" \
		"getAllChildrenNumber /golden" "whoami" "removewatches /golden/zkcli -d" "ls -s /golden"; do
		# zkCli exits non-zero when the server answers with an error (removewatches).
		run "zkcli-$(echo "$c" | cut -d' ' -f1)" "timeout 30 /usr/share/zookeeper/bin/zkCli.sh -server $proxy $c || true"
	done
	run 4lw 'fourletter $PROXY_PORT ruok'
	kill "$zk"
	wait "$zk" 2>/dev/null || true

	rm -rf "$GOLDEN/client"
	"$WORK/capture" extract -in "$frames" -out "$GOLDEN/client" -commands "$WORK/commands.txt" \
		-txnlog "$(ls "$WORK"/data/version-2/log.* | head -n 1)" \
		-txnlog-command "ZooKeeper 3.8.0's txn log of the server all the sessions above ran against"
}

capture_peer() {
	local p=$PEER_PORT_BASE frames=$WORK/peer-frames
	# server 1: client p, quorum p+1, election p+2; proxies to it: quorum p+3, election p+4
	# server 2: client p+10, quorum p+11, election p+12; proxies to it: p+13, p+14
	free "$p" $((p + 1)) $((p + 2)) $((p + 3)) $((p + 4)) $((p + 5)) $((p + 10)) $((p + 11)) $((p + 12)) $((p + 13)) $((p + 14))
	mkdir -p "$frames"
	# Each server's config names the other server's proxies, so every
	# connection between the two is recorded.
	peer_cfg() { # id clientPort quorum1 election1 quorum2 election2 [extra config line]
		mkdir -p "$WORK/peer$1"
		echo "$1" >"$WORK/peer$1/myid"
		cat >"$WORK/peer$1/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$WORK/peer$1
clientPort=$2
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
${7:-}
server.1=127.0.0.1:$3:$4
server.2=127.0.0.1:$5:$6
CFG
	}
	peer_cfg 1 "$p" $((p + 1)) $((p + 2)) $((p + 13)) $((p + 14))
	peer_cfg 2 $((p + 10)) $((p + 3)) $((p + 4)) $((p + 11)) $((p + 12))
	raw_proxy() { # session listen target
		"$WORK/capture" proxy -raw -listen "127.0.0.1:$2" -target "127.0.0.1:$3" -out "$frames" -session "$1" 2>>"$WORK/proxy.log" &
		PIDS="$PIDS $!"
		printf '%s\t%s\n' "$1" "a two-server ZooKeeper 3.8.0 ensemble (capture.sh peer), proxy 127.0.0.1:$2 -> 127.0.0.1:$3" >>"$WORK/commands.txt"
	}
	raw_proxy election-to1 $((p + 4)) $((p + 2))
	raw_proxy quorum-to1 $((p + 3)) $((p + 1))
	raw_proxy election-to2 $((p + 14)) $((p + 12))
	raw_proxy quorum-to2 $((p + 13)) $((p + 11))
	# Server 1 starts first, so that server 2's connection to it (through the
	# proxy) is the one kept: of two election connections ZooKeeper keeps the
	# one the higher id opened, and redials others at the address the lower
	# id announces (its real one, not the proxy).
	local servers
	start_ensemble() {
		servers=""
		for n in 1 2; do
			java -cp "$JARS" -Dzookeeper.log.dir="$WORK/peer$n" \
				org.apache.zookeeper.server.quorum.QuorumPeerMain "$WORK/peer$n/zoo.cfg" >"$WORK/peer$n/server.log" 2>&1 &
			servers="$servers $!"
			sleep 3
		done
		PIDS="$PIDS $servers"
		local modes=""
		for _ in $(seq 1 60); do
			modes="$(fourletter "$p" srvr 2>/dev/null | grep Mode || true) $(fourletter $((p + 10)) srvr 2>/dev/null | grep Mode || true)"
			case "$modes" in *leader*follower* | *follower*leader*) return 0 ;; esac
			sleep 1
		done
		echo "the ensemble did not form: $modes" >&2
		exit 1
	}
	start_ensemble
	# A write through each server: the follower forwards its request to the leader.
	for port in "$p" $((p + 10)); do
		timeout 30 /usr/share/zookeeper/bin/zkCli.sh -server "127.0.0.1:$port" create "/peer-$port" p >>"$WORK/drivers.log" 2>&1 || true
	done
	sleep 3 # leader pings
	for pid in $servers; do kill "$pid"; done
	wait $servers 2>/dev/null || true
	sleep 1

	# A reconfig needs reconfigEnabled, under which the servers share one
	# config, so it runs on a second ensemble with no proxies between the
	# servers: the reconfig request and reply through a recording client
	# proxy, its txn in server 1's log.
	p=$((PEER_PORT_BASE + 30))
	free "$p" $((p + 1)) $((p + 2)) $((p + 5)) $((p + 10)) $((p + 11)) $((p + 12))
	rm -rf "$WORK/peer1" "$WORK/peer2"
	local extra="reconfigEnabled=true
skipACL=yes"
	peer_cfg 1 "$p" $((p + 1)) $((p + 2)) $((p + 11)) $((p + 12)) "$extra"
	peer_cfg 2 $((p + 10)) $((p + 1)) $((p + 2)) $((p + 11)) $((p + 12)) "$extra"
	start_ensemble
	"$WORK/capture" proxy -listen "127.0.0.1:$((p + 5))" -target "127.0.0.1:$p" -out "$frames" -session reconfig 2>>"$WORK/proxy.log" &
	local reconfig_proxy=$!
	PIDS="$PIDS $reconfig_proxy"
	sleep 1
	# Add an observer that never starts: the voters' quorum is unchanged.
	local observer="server.3=127.0.0.1:$((p + 21)):$((p + 22)):observer;127.0.0.1:$((p + 20))"
	printf '%s\t%s\n' reconfig "zkCli.sh -server 127.0.0.1:$((p + 5)) reconfig -add '$observer' (capture.sh peer)" >>"$WORK/commands.txt"
	timeout 30 /usr/share/zookeeper/bin/zkCli.sh -server "127.0.0.1:$((p + 5))" reconfig -add "$observer" >>"$WORK/drivers.log" 2>&1
	sleep 1
	for pid in $servers $reconfig_proxy; do kill "$pid"; done
	wait $servers $reconfig_proxy 2>/dev/null || true

	rm -rf "$GOLDEN/peer"
	"$WORK/capture" extract -in "$frames" -out "$GOLDEN/peer" -commands "$WORK/commands.txt" \
		-txnlog "$(ls "$WORK"/peer1/version-2/log.* | head -n 1)" \
		-txnlog-command "server 1's txn log of the second ensemble, with the reconfig (capture.sh peer)"
}

case "$PART" in
client) capture_client ;;
peer) capture_peer ;;
all) capture_client && capture_peer ;;
*) echo "usage: $0 [client|peer|all]" >&2; exit 2 ;;
esac
echo "golden vectors in $GOLDEN; logs in $WORK"
