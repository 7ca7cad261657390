# Shell functions for scripts that run a private Debian ZooKeeper 3.8 (or a
# zabd, which reads the same zoo.cfg) on 127.0.0.1 only. Source it from bash:
#   source "<repository root>/scripts/lib/zookeeper.sh"
# It defines functions and ZK_PID only; nothing runs when it is sourced, so a
# script can check for Debian's packages (and skip) after sourcing it.

# zk_classpath: Debian's ZooKeeper jars and their dependencies, as java -cp
# takes them.
zk_classpath() { ls /usr/share/java/*.jar | tr '\n' :; }

# free_port: a TCP port free on 127.0.0.1 now.
free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# write_zoo_cfg FILE DATADIR PORT [LINE...]: a standalone server's zoo.cfg
# that listens for clients on 127.0.0.1:PORT only, keeps its data in DATADIR
# and runs no admin server; each LINE (key=value) is appended.
write_zoo_cfg() {
	local file=$1 datadir=$2 port=$3
	shift 3
	{
		echo "tickTime=2000"
		echo "dataDir=$datadir"
		echo "clientPort=$port"
		echo "clientPortAddress=127.0.0.1"
		echo "admin.enableServer=false"
		local line
		for line in "$@"; do echo "$line"; done
	} >"$file"
}

# zk_start CFG LOG: starts Debian's ZooKeeper on CFG in the background, its
# output in LOG, and sets ZK_PID. Callers poll the port for readiness.
ZK_PID=
zk_start() {
	java -cp "$(zk_classpath)" org.apache.zookeeper.server.ZooKeeperServerMain "$1" >"$2" 2>&1 &
	ZK_PID=$!
}

# zk_stop: stops the server zk_start started, if it still runs, and waits for
# it to exit. Safe to call twice (and from an EXIT trap).
zk_stop() {
	if [[ -n "$ZK_PID" ]]; then
		kill "$ZK_PID" 2>/dev/null || true
		wait "$ZK_PID" 2>/dev/null || true
		ZK_PID=
	fi
}
