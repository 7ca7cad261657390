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
# ensemble: three voters and an observer through raw-logging proxies: forwarded
#   writes of many kinds, pings with touches, INFORM, REVALIDATE (valid and
#   not), a DIFF with txns, SNAP and its snapshot stream, and TRUNC after a
#   leader crash. Rewrites wire/testdata/golden/ensemble/.
#
# Ports: ZK_PORT (21810), PROXY_PORT (21811), PEER_PORT_BASE (21920, uses
# base..base+52), ENSEMBLE_PORT_BASE (22000, uses base+10..base+44). Session
# ids, zxids, times and digests change on every run,
# so the expected values in golden_fields_test.go, peer_golden_test.go and
# peerdata_golden_test.go
# must be updated after re-recording.
set -eu
PART=${1:-all}
ZK_PORT=${ZK_PORT:-21810}
PROXY_PORT=${PROXY_PORT:-21811}
PEER_PORT_BASE=${PEER_PORT_BASE:-21920}
ENSEMBLE_PORT_BASE=${ENSEMBLE_PORT_BASE:-22000}
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

# ensemble: three voters and an observer, every election and quorum
# connection through a raw-logging proxy, driven through the packets the
# two-server capture lacks. Rewrites wire/testdata/golden/ensemble/.
capture_ensemble() {
	local e=$ENSEMBLE_PORT_BASE frames=$WORK/ensemble-frames n
	# server n: client e+10n, quorum e+10n+1, election e+10n+2; the proxies
	# to it: quorum e+10n+3, election e+10n+4. Server 4 is the observer.
	for n in 1 2 3 4; do
		free $((e + 10 * n)) $((e + 10 * n + 1)) $((e + 10 * n + 2)) $((e + 10 * n + 3)) $((e + 10 * n + 4))
	done
	mkdir -p "$frames"
	declare -A proxy_pid server_pid
	for n in 1 2 3 4; do
		mkdir -p "$WORK/ens$n"
		echo "$n" >"$WORK/ens$n/myid"
		{
			cat <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$WORK/ens$n
clientPort=$((e + 10 * n))
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
CFG
			for m in 1 2 3 4; do
				local role=participant
				[ "$m" = 4 ] && role=observer
				if [ "$m" = "$n" ]; then
					echo "server.$m=127.0.0.1:$((e + 10 * m + 1)):$((e + 10 * m + 2)):$role"
				else
					echo "server.$m=127.0.0.1:$((e + 10 * m + 3)):$((e + 10 * m + 4)):$role"
				fi
			done
		} >"$WORK/ens$n/zoo.cfg"
	done
	ens_proxy() { # session listen target
		"$WORK/capture" proxy -raw -listen "127.0.0.1:$2" -target "127.0.0.1:$3" -out "$frames" -session "$1" 2>>"$WORK/proxy.log" &
		proxy_pid[$1]=$!
		PIDS="$PIDS $!"
		printf '%s\t%s\n' "$1" "three voters and an observer, ZooKeeper 3.8.0 (capture.sh ensemble: $STEP), proxy 127.0.0.1:$2 -> 127.0.0.1:$3" >>"$WORK/commands.txt"
	}
	STEP="every step"
	for n in 1 2 3 4; do
		ens_proxy "election-to$n" $((e + 10 * n + 4)) $((e + 10 * n + 2))
		ens_proxy "quorum-to$n" $((e + 10 * n + 3)) $((e + 10 * n + 1))
	done
	# zookeeper.snapshotSizeFactor=-1: a leader syncs a follower from the
	# proposals it keeps in memory (the last 500) or by snapshot, never from
	# its txn log.
	start_server() {
		java -cp "$JARS" -Dzookeeper.log.dir="$WORK/ens$1" -Dzookeeper.snapshotSizeFactor=-1 \
			org.apache.zookeeper.server.quorum.QuorumPeerMain "$WORK/ens$1/zoo.cfg" >>"$WORK/ens$1/server.log" 2>&1 &
		server_pid[$1]=$!
		PIDS="$PIDS $!"
	}
	mode() { fourletter $((e + 10 * $1)) srvr 2>/dev/null | sed -n 's/^Mode: //p' || true; }
	serving() { # n...: wait until each server leads, follows or observes
		local n
		for _ in $(seq 1 90); do
			local ok=1
			for n in "$@"; do
				case "$(mode "$n")" in leader | follower | observer) ;; *) ok=0 ;; esac
			done
			[ $ok = 1 ] && return 0
			sleep 1
		done
		echo "servers $* are not serving" >&2
		exit 1
	}
	stop_server() {
		kill "${server_pid[$1]}"
		wait "${server_pid[$1]}" 2>/dev/null || true
	}
	drive() { /usr/bin/python3 "$HERE/ensemble_driver.py" "$@" >>"$WORK/drivers.log" 2>&1; }
	addr() { echo "127.0.0.1:$((e + 10 * $1))"; }

	for n in 1 2 3 4; do
		start_server "$n"
		sleep 1
	done
	serving 1 2 3 4
	local leader f1 f2
	for n in 1 2 3; do
		if [ "$(mode "$n")" = leader ]; then leader=$n; elif [ -z "${f1:-}" ]; then f1=$n; else f2=$n; fi
	done
	echo "ensemble: leader $leader, followers $f1 $f2, observer 4" >>"$WORK/drivers.log"
	# Forwarded writes of many kinds and pings with touches (follower),
	# forwarded writes and INFORMs (observer), sessions moving (REVALIDATE).
	drive ops "$(addr "$f1")"
	drive writes "$(addr 4)" 3 /observer-
	drive move "$(addr "$f1")" "$(addr "$f2")" "$(addr 4)"
	# A follower that missed 2 txns is sent them after DIFF as PROPOSAL and
	# COMMIT; one that lost its disk, a snapshot (SNAP), with a live session
	# and its ephemeral node in it.
	stop_server "$f2"
	drive writes "$(addr "$f1")" 2 /diff-
	start_server "$f2"
	serving "$f2"
	stop_server "$f2"
	rm -rf "$WORK/ens$f2/version-2"
	drive writes "$(addr "$f1")" 3 /snap-
	mkdir -p "$WORK/hold"
	drive hold "$(addr "$f1")" /held "$WORK/hold" &
	local holder=$!
	for _ in $(seq 1 30); do [ -e "$WORK/hold/ready" ] && break; sleep 1; done
	start_server "$f2"
	serving "$f2"
	touch "$WORK/hold/go"
	wait "$holder"
	# A leader cut off from the others (its quorum proxy frozen) logs a
	# txn no one else sees and dies; the others elect a new leader, which
	# tells the old one, when it comes back, to drop that txn (TRUNC).
	mkdir -p "$WORK/unacked"
	drive unacked "$(addr "$leader")" /lost "$WORK/unacked" &
	local driver=$!
	for _ in $(seq 1 30); do [ -e "$WORK/unacked/ready" ] && break; sleep 1; done
	kill -STOP "${proxy_pid[quorum-to$leader]}"
	touch "$WORK/unacked/go"
	wait "$driver" || true
	kill -KILL "${server_pid[$leader]}" "${proxy_pid[quorum-to$leader]}"
	wait "${server_pid[$leader]}" "${proxy_pid[quorum-to$leader]}" 2>/dev/null || true
	STEP="after the first leader's crash"
	ens_proxy "quorum-to${leader}b" $((e + 10 * leader + 3)) $((e + 10 * leader + 1))
	serving "$f1" "$f2" 4
	start_server "$leader"
	serving "$leader"
	drive writes "$(addr "$leader")" 1 /after-
	sleep 3 # pings
	for n in 1 2 3 4; do stop_server "$n"; done
	for p in "${proxy_pid[@]}"; do kill "$p" 2>/dev/null || true; done
	wait "${proxy_pid[@]}" 2>/dev/null || true

	rm -rf "$GOLDEN/ensemble"
	"$WORK/capture" extract -in "$frames" -out "$GOLDEN/ensemble" -commands "$WORK/commands.txt"
}

case "$PART" in
client) capture_client ;;
peer) capture_peer ;;
ensemble) capture_ensemble ;;
all) capture_client && capture_peer && capture_ensemble ;;
*) echo "usage: $0 [client|peer|ensemble|all]" >&2; exit 2 ;;
esac
echo "golden vectors in $GOLDEN; logs in $WORK"
