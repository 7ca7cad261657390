#!/usr/bin/env bash
# Interop of zab/storage's files with Debian's ZooKeeper 3.8, both ways:
#   (a) ZooKeeper's own dumpers (TxnLogToolkit, SnapshotFormatter) read the
#       log and snapshot files zabd writes;
#   (b) zabd recovers from a data directory ZooKeeper 3.8 wrote
#       (zab/storage/testdata/zk38) to exactly the tree ZooKeeper served;
#   (c) Debian's ZooKeeper starts on a data directory zabd wrote (log files,
#       a fuzzy snapshot, epoch files; zab/storage/testdata/mkdata) and
#       serves the tree zabd's datatree holds: every path, data and stat,
#       read through kazoo;
#   (d) with dataLogDir apart from dataDir, zabd puts its log in the one and
#       its snapshots in the other, and Debian's ZooKeeper started on that
#       pair serves the same nodes and stats (zab/server's
#       TestSeparateDataLogDir).
# Exits non-zero on any failure; skips (exit 0, with a message) when
# Debian's zookeeper, java or python3-kazoo is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

skip() { echo "interop: SKIP: $*"; exit 0; }
[[ -f /usr/share/java/zookeeper.jar ]] || skip "Debian's zookeeper is not installed (/usr/share/java/zookeeper.jar)"
command -v java >/dev/null || skip "java is not installed"
/usr/bin/python3 -c 'import kazoo' 2>/dev/null || skip "python3-kazoo is not installed"

source scripts/lib/zookeeper.sh
work="$(mktemp -d)"
cleanup() {
	zk_stop
	rm -rf "$work"
}
trap cleanup EXIT
cp="$(zk_classpath)"

echo "== (a) ZooKeeper's dumpers read zabd's files; (b) zabd reads ZooKeeper 3.8's data dir"
go test -count=1 -run '^(TestZooKeeperDumpersReadOurFiles|TestReadZooKeeper38DataDir)$' -v ./zab/storage/ | grep -E '^(=== RUN|--- |ok|FAIL|PASS)'

echo "== (c) Debian's ZooKeeper 3.8 serves a data dir zabd wrote"
go run ./zab/storage/testdata/mkdata -dir "$work/data" -expected "$work/expected.json"
for f in "$work"/data/version-2/log.*; do
	out="$(java -cp "$cp" org.apache.zookeeper.server.persistence.TxnLogToolkit "$f" 2>&1 | tr -d '\0')"
	grep -q 'EOF reached after [0-9]* txns' <<<"$out" || { echo "$out" | tail -20; echo "interop: FAIL: TxnLogToolkit on $f"; exit 1; }
	echo "TxnLogToolkit $(basename "$f"): $(grep -o 'EOF reached after [0-9]* txns' <<<"$out")"
done
for f in "$work"/data/version-2/snapshot.*; do
	out="$(java -cp "$cp" org.apache.zookeeper.server.SnapshotFormatter "$f" 2>&1 | tr -d '\0')"
	grep -q '^Last zxid: ' <<<"$out" || { echo "$out" | tail -20; echo "interop: FAIL: SnapshotFormatter on $f"; exit 1; }
	echo "SnapshotFormatter $(basename "$f"): $(grep '^Last zxid: ' <<<"$out")"
done

port="$(free_port)"
write_zoo_cfg "$work/zoo.cfg" "$work/data" "$port"
zk_start "$work/zoo.cfg" "$work/zk.log"
if ! PYTHONPATH=scripts/lib /usr/bin/python3 - "$port" "$work/expected.json" <<'PY'
import json, sys
import zktree
port, expected_file = sys.argv[1], sys.argv[2]
expected = json.load(open(expected_file))
zk = zktree.connect(port)
zk.add_auth("digest", "u:p")
served = zktree.read_tree(zk)
zk.stop()
zk.close()
bad = 0
for path in sorted(set(expected) | set(served)):
    if expected.get(path) != served.get(path):
        bad += 1
        print("differs: %s\n  zabd:      %s\n  ZooKeeper: %s" % (path, expected.get(path), served.get(path)))
print("compared %d nodes, %d differ" % (len(set(expected) | set(served)), bad))
sys.exit(1 if bad else 0)
PY
then
	echo "--- ZooKeeper's log:"; grep -v '^\[main\] .*Server environment' "$work/zk.log" | tail -40
	echo "interop: FAIL: the tree ZooKeeper serves from zabd's data dir differs"
	exit 1
fi
if grep -qi 'digest mismatch\|Digests are not matching\|of snapshot digest does not' "$work/zk.log"; then
	grep -i 'digest' "$work/zk.log" | tail -5
	echo "interop: FAIL: ZooKeeper found zabd's digests wrong"
	exit 1
fi
grep -q 'The digest in the snapshot has digest version of 2' "$work/zk.log" ||
	{ echo "interop: FAIL: ZooKeeper did not read the snapshot's digest"; exit 1; }

echo "== (d) Debian's ZooKeeper 3.8 serves a dataDir/dataLogDir pair zabd wrote"
go test -count=1 -run '^TestSeparateDataLogDir$' -v ./zab/server/ | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|skipping'
echo "interop: PASS"
