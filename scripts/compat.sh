#!/usr/bin/env bash
# Compatibility run: real ZooKeeper clients against a real zabd process.
#
# Builds zabd, starts it on a free loopback port with a fresh data dir, and
# drives it with kazoo's recipes (Debian's python3-kazoo), a zkCli.sh session
# of ZooKeeper 3.8's CLI commands (Debian's zookeeper), a smoke run of the C
# client cli_mt (Debian's zookeeper-bin), Curator's recipes
# (scripts/compat/CuratorCompat.java against Debian's libcurator-*-java) and
# zktop (Debian's zktop) parsing the four-letter words; then stops it. Exits
# non-zero on any failure; skips (exit 0, with a message) when those packages
# are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

ZKCLI=/usr/share/zookeeper/bin/zkCli.sh
CLI_MT=/usr/lib/zookeeper/bin/cli_mt
PYTHON=/usr/bin/python3

missing=()
[ -x "$ZKCLI" ] || missing+=("zookeeper (zkCli.sh)")
[ -x "$CLI_MT" ] || missing+=("zookeeper-bin (cli_mt)")
{ [ -x "$PYTHON" ] && "$PYTHON" -c 'import kazoo' 2>/dev/null; } || missing+=("python3-kazoo")
# Curator's jars and what they need, from Debian's packages (guava, slf4j and
# jackson come with libcurator-*-java; slf4j-nop keeps Curator quiet).
CURATOR_JARS=(curator-client curator-framework curator-recipes zookeeper zookeeper-jute guava slf4j-api slf4j-nop
	jackson-databind jackson-core jackson-annotations)
curator_cp=
for jar in "${CURATOR_JARS[@]}"; do
	[ -f "/usr/share/java/$jar.jar" ] || missing+=("/usr/share/java/$jar.jar (libcurator-*-java)")
	curator_cp+=/usr/share/java/$jar.jar:
done
command -v javac >/dev/null || missing+=("javac (a JDK)")
[ -x /usr/bin/zktop ] || missing+=("zktop")
if [ ${#missing[@]} -gt 0 ]; then
	echo "compat.sh: skipping: Debian packages missing: ${missing[*]}"
	exit 0
fi

source scripts/lib/zookeeper.sh
work=$(mktemp -d)
zabd_pid=
cleanup() {
	if [ -n "$zabd_pid" ]; then
		kill -TERM "$zabd_pid" 2>/dev/null || true
		wait "$zabd_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "compat.sh: FAIL: $*" >&2
	echo "--- zabd log (last 30 lines)" >&2
	tail -30 "$work/zabd.log" >&2 || true
	exit 1
}

go build -o "$work/zabd" ./cmd/zabd
port=$(free_port)
addr=127.0.0.1:$port
write_zoo_cfg "$work/zoo.cfg" "$work/data" "$port" '4lw.commands.whitelist=*' extendedTypesEnabled=true znode.container.checkIntervalMs=200
"$work/zabd" -config "$work/zoo.cfg" >"$work/zabd.log" 2>&1 &
zabd_pid=$!
for _ in $(seq 100); do
	if [ "$("$PYTHON" - "$port" <<'PY' 2>/dev/null
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
s.sendall(b"ruok"); print(s.recv(16).decode())
PY
)" = imok ]; then break; fi
	kill -0 "$zabd_pid" 2>/dev/null || fail "zabd exited during start-up"
	sleep 0.1
done
echo "compat.sh: zabd running on $addr (pid $zabd_pid)"

echo "=== kazoo recipes"
timeout 120 "$PYTHON" - "$addr" <<'PY' || fail "kazoo recipes"
import sys, threading, time
from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock
from kazoo.recipe.election import Election
from kazoo.recipe.barrier import Barrier
from kazoo.recipe.queue import Queue
from kazoo.recipe.counter import Counter
from kazoo.recipe.party import Party
from kazoo.recipe.watchers import DataWatch, ChildrenWatch

addr = sys.argv[1]
def client():
    c = KazooClient(hosts=addr, timeout=10)
    c.start(timeout=10)
    return c

def check(cond, what):
    if not cond:
        raise SystemExit("kazoo: " + what)
    print("  ok:", what)

# Lock: several clients each increment a shared counter under the lock.
main = client()
main.ensure_path("/compat")
main.create("/compat/counter", b"0")
def worker(n):
    c = client()
    lock = Lock(c, "/compat/lock", "worker-%d" % n)
    for _ in range(20):
        with lock:
            v, st = c.get("/compat/counter")
            c.set("/compat/counter", str(int(v) + 1).encode(), version=st.version)
    c.stop(); c.close()
threads = [threading.Thread(target=worker, args=(i,)) for i in range(5)]
[t.start() for t in threads]; [t.join(60) for t in threads]
check(main.get("/compat/counter")[0] == b"100", "Lock: 5 clients x 20 increments = 100")

# Election: the first contender leads; when it leaves, the second does.
won = []
def lead(name, done):
    won.append(name); done.wait(10)
first_done, second_done = threading.Event(), threading.Event()
c1, c2 = client(), client()
e1, e2 = Election(c1, "/compat/election", "one"), Election(c2, "/compat/election", "two")
t1 = threading.Thread(target=e1.run, args=(lead, "one", first_done)); t1.start()
deadline = time.time() + 10
while not won and time.time() < deadline: time.sleep(0.05)
t2 = threading.Thread(target=e2.run, args=(lead, "two", second_done)); t2.start()
time.sleep(0.3)
check(won == ["one"], "Election: first contender leads alone")
check(sorted(e1.contenders()) == ["one", "two"], "Election: contenders listed")
first_done.set(); t1.join(10)
deadline = time.time() + 10
while len(won) < 2 and time.time() < deadline: time.sleep(0.05)
check(won == ["one", "two"], "Election: second contender takes over")
second_done.set(); t2.join(10)
c1.stop(); c2.stop()

# Barrier: waiters block until the barrier is removed.
b = Barrier(main, "/compat/barrier"); b.create()
result = []
t = threading.Thread(target=lambda: result.append(Barrier(client(), "/compat/barrier").wait(10))); t.start()
time.sleep(0.3)
check(not result, "Barrier: waiter blocks")
b.remove(); t.join(10)
check(result == [True], "Barrier: waiter released on remove")

# Queue: FIFO order across clients.
q = Queue(main, "/compat/queue")
for i in range(10): q.put(str(i).encode())
q2 = Queue(client(), "/compat/queue")
got = [q2.get() for _ in range(10)]
check(got == [str(i).encode() for i in range(10)], "Queue: FIFO")
check(q2.get() is None, "Queue: empty after draining")

# Counter: versioned increments from two clients.
ca, cb = Counter(main, "/compat/cnt"), Counter(client(), "/compat/cnt")
for _ in range(10): ca += 1; cb += 2
check(Counter(main, "/compat/cnt").value == 30, "Counter: 10x1 + 10x2 = 30")

# Party: members come and go with their sessions.
members = [client() for _ in range(3)]
parties = [Party(m, "/compat/party", "m%d" % i) for i, m in enumerate(members)]
[p.join() for p in parties]
check(len(Party(main, "/compat/party")) == 3, "Party: three members")
members[0].stop(); members[0].close()
check(len(Party(main, "/compat/party")) == 2, "Party: a member leaves with its session")

# DataWatch / ChildrenWatch.
data_seen, kids_seen = [], []
main.create("/compat/watched", b"v0")
DataWatch(main, "/compat/watched", lambda data, stat: data_seen.append(data))
ChildrenWatch(main, "/compat/watched", lambda children: kids_seen.append(sorted(children)))
other = client()
other.set("/compat/watched", b"v1")
other.create("/compat/watched/kid")
deadline = time.time() + 10
while (len(data_seen) < 2 or len(kids_seen) < 2) and time.time() < deadline: time.sleep(0.05)
check(data_seen[:2] == [b"v0", b"v1"], "DataWatch: initial value then the change")
check(kids_seen[:2] == [[], ["kid"]], "ChildrenWatch: initial list then the new child")
main.stop(); main.close()
PY

echo "=== zkCli.sh session"
cli_out=$work/zkcli.out
timeout 120 "$ZKCLI" -server "$addr" >"$cli_out" 2>&1 <<'CLI' || true
version
create /cli "hello"
create -s /cli/seq- s
create -e /cli/eph e
create -c /cli/box
create -t 60000 /cli/ttl t
create /cli/box/item i
get -s /cli
set -v 0 /cli "world"
get /cli
stat /cli
ls -s /cli
ls -R /cli
getAcl /cli
addauth digest alice:secret
setAcl /cli/seq-0000000000 auth:alice:secret:cdrwa
getAcl /cli/seq-0000000000
whoami
getEphemerals /cli
getAllChildrenNumber /cli
addWatch -m PERSISTENT_RECURSIVE /cli
set /cli/eph changed
removewatches /cli -a
setquota -n 10 /cli
listquota /cli
delquota -n /cli
sync /cli
printwatches
history
delete -v 5 /cli/eph
delete /cli/eph
deleteall /cli
ls /cli
quit
CLI
expect_cli() {
	grep -qF -- "$1" "$cli_out" || fail "zkCli.sh: expected '$1' in its output (see below)
$(cat "$cli_out")"
	echo "  ok: zkCli $2"
}
expect_cli "ZooKeeper CLI version" "version"
expect_cli "Created /cli/seq-0000000000" "create -s"
expect_cli "Created /cli/eph" "create -e"
expect_cli "Created /cli/box" "create -c"
expect_cli "Created /cli/ttl" "create -t"
expect_cli "hello" "get"
expect_cli "world" "set -v / get"
expect_cli "dataLength = 5" "stat"
expect_cli "/cli/box/item" "ls -R"
expect_cli "'world,'anyone" "getAcl"
expect_cli "'digest,'alice:" "setAcl auth + getAcl"
expect_cli "digest" "whoami"
expect_cli "[/cli/eph]" "getEphemerals"
expect_cli "WatchedEvent state:SyncConnected type:NodeDataChanged path:/cli/eph" "addWatch recursive"
expect_cli "Output quota for /cli count=10" "setquota/listquota"
expect_cli "version No is not valid : /cli/eph" "delete -v (BadVersion)"
expect_cli "Node does not exist: /cli" "deleteall"
if grep -E "Exception|Unexpected" "$cli_out" | grep -v "Unable to read additional data" >/dev/null; then
	fail "zkCli.sh printed an exception:
$(cat "$cli_out")"
fi

echo "=== C client cli_mt"
mt_out=$work/cli_mt.out
{ echo "create /cmt"; sleep 0.5; echo "ls /"; sleep 0.5; echo "get /cmt"; sleep 0.5; echo "delete /cmt"; sleep 0.5; echo "quit"; } |
	timeout 30 "$CLI_MT" "$addr" >"$mt_out" 2>&1 || true
for want in "Got a new session id" "name = /cmt" "cmt" "Stat:" "Quitting"; do
	grep -qF "$want" "$mt_out" || fail "cli_mt: expected '$want' (output below)
$(cat "$mt_out")"
done
echo "  ok: cli_mt create, ls, get, delete"

echo "=== Curator"
mkdir -p "$work/curator"
javac -d "$work/curator" -cp "$curator_cp" scripts/compat/CuratorCompat.java || fail "javac CuratorCompat.java"
timeout 300 java -cp "$work/curator:$curator_cp" CuratorCompat "$addr" || fail "Curator recipes"

echo "=== zktop"
timeout 60 "$PYTHON" scripts/compat/zktop_check.py "$addr" || fail "zktop"

echo "=== stop"
kill -TERM "$zabd_pid"
wait "$zabd_pid" || fail "zabd did not stop cleanly on SIGTERM"
zabd_pid=
echo "compat.sh: all passed"
