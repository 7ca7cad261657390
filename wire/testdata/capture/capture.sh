#!/bin/bash
# Re-record wire's golden vectors: start a private ZooKeeper 3.8 (Debian's)
# on 127.0.0.1 with a fresh dataDir, drive go-zookeeper/zk, the Java client,
# kazoo and zkCli.sh through the recording proxy, then rewrite
# wire/testdata/golden/ (frame logs, the server's txn log, manifest.json).
#
# Run from the repository root: bash wire/testdata/capture/capture.sh
# Ports: ZK_PORT (default 21810) and PROXY_PORT (default 21811).
# Session ids, zxids and times change on every run, so golden_test.go's
# expected values must be updated after re-recording.
set -eu
ZK_PORT=${ZK_PORT:-21810}
PROXY_PORT=${PROXY_PORT:-21811}
ROOT=$(pwd)
HERE=$ROOT/wire/testdata/capture
GOLDEN=$ROOT/wire/testdata/golden
WORK=$(mktemp -d /tmp/wire-capture.XXXXXX)
JARS=$(ls /usr/share/java/*.jar | tr '\n' :)
PROXY=127.0.0.1:$PROXY_PORT
PIDS=""

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

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
mkdir -p "$WORK/data" "$WORK/frames" "$WORK/classes"

# ruok PORT: send ZooKeeper's "ruok" and print the answer.
ruok() {
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf ruok >&3 && cat <&3"
}
if ruok "$ZK_PORT" >/dev/null 2>&1 || ruok "$PROXY_PORT" >/dev/null 2>&1; then
	echo "port $ZK_PORT or $PROXY_PORT is in use; set ZK_PORT and PROXY_PORT" >&2
	exit 1
fi

java -cp "$JARS" -Djava.security.auth.login.config="$WORK/jaas-server.conf" \
	-Dzookeeper.log.dir="$WORK" \
	org.apache.zookeeper.server.ZooKeeperServerMain "$WORK/zoo.cfg" >"$WORK/server.log" 2>&1 &
ZK_PID=$!
PIDS="$ZK_PID"
go build -o "$WORK/capture" ./wire/testdata/capture
go build -o "$WORK/gozk" ./wire/testdata/capture/gozk
javac -proc:none -implicit:none -d "$WORK/classes" -cp "$JARS" "$HERE/java/org/apache/zookeeper/GoldenDriver.java"
for i in $(seq 1 30); do
	if [ "$(ruok "$ZK_PORT" 2>/dev/null || true)" = imok ]; then break; fi
	sleep 1
done
kill -0 "$ZK_PID"

# run SESSION COMMAND...: relay one driver's traffic through a fresh proxy;
# the driver finds the proxy's pid in $PROXY_PID.
run() {
	session=$1
	shift
	"$WORK/capture" proxy -listen "$PROXY" -target "127.0.0.1:$ZK_PORT" -out "$WORK/frames" -session "$session" 2>>"$WORK/proxy.log" &
	PROXY_PID=$!
	PIDS="$PIDS $PROXY_PID"
	sleep 1
	printf '%s\t%s\n' "$session" "$*" >>"$WORK/commands.txt"
	eval "$@" >>"$WORK/drivers.log" 2>&1
	sleep 1
	kill "$PROXY_PID"
	wait "$PROXY_PID" 2>/dev/null || true
}

run gozk '"$WORK/gozk" -server $PROXY -proxy-pid $PROXY_PID'
run java 'java -cp "$WORK/classes:$JARS" org.apache.zookeeper.GoldenDriver main $PROXY $PROXY_PID'
run sasl 'java -cp "$WORK/classes:$JARS" -Djava.security.auth.login.config=$WORK/jaas-client.conf org.apache.zookeeper.GoldenDriver sasl $PROXY'
run kazoo '/usr/bin/python3 $HERE/kazoo_driver.py $PROXY $PROXY_PID'
for c in "create /golden/zkcli z" "addWatch -m PERSISTENT /golden/zkcli" "getEphemerals /golden" \
	"getAllChildrenNumber /golden" "whoami" "removewatches /golden/zkcli -d" "ls -s /golden"; do
	# zkCli exits non-zero when the server answers with an error (removewatches).
	run "zkcli-$(echo "$c" | cut -d' ' -f1)" "timeout 30 /usr/share/zookeeper/bin/zkCli.sh -server $PROXY $c || true"
done
run 4lw 'ruok $PROXY_PORT'

kill "$ZK_PID"
wait "$ZK_PID" 2>/dev/null || true
rm -rf "$GOLDEN"
"$WORK/capture" extract -in "$WORK/frames" -out "$GOLDEN" -commands "$WORK/commands.txt" \
	-txnlog "$(ls "$WORK"/data/version-2/log.* | head -n 1)" \
	-txnlog-command "ZooKeeper 3.8.0's txn log of the server all the sessions above ran against"
echo "golden vectors in $GOLDEN; logs in $WORK"
