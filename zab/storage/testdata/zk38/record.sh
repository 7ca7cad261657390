#!/usr/bin/env bash
# Records a data directory written by Debian's ZooKeeper 3.8 (standalone),
# with snapCount=20 so that it holds several log files and snapshots, and
# the tree it then serves (expected.json, every path with data and stat,
# read through kazoo). Run from the repository root:
#   zab/storage/testdata/zk38/record.sh
# It replaces zab/storage/testdata/zk38/{version-2,expected.json}.
set -euo pipefail
out="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
cleanup() { [[ -n "${zkpid:-}" ]] && kill "$zkpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cat >"$work/zoo.cfg" <<CFG
tickTime=2000
dataDir=$work/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
snapCount=20
autopurge.purgeInterval=0
CFG
cp="$(ls /usr/share/java/*.jar | tr '\n' :)"
java -cp "$cp" org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" >"$work/zk.log" 2>&1 &
zkpid=$!
/usr/bin/python3 - "$port" "$out/expected.json" <<'PY'
import json, sys, time
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
port, expected = sys.argv[1], sys.argv[2]
deadline = time.time() + 60
while True:
    try:
        zk = KazooClient(hosts="127.0.0.1:" + port, timeout=5)
        zk.start(timeout=5)
        break
    except Exception:
        if time.time() > deadline:
            raise
        time.sleep(0.2)
zk.create("/app", b"root of the test tree")
for i in range(30):
    zk.create("/app/n%02d" % i, b"v%d" % i)
for i in range(0, 30, 3):
    zk.set("/app/n%02d" % i, b"updated %d" % i)
for i in range(1, 30, 5):
    zk.delete("/app/n%02d" % i)
zk.create("/app/seq-", b"s", sequence=True)
zk.create("/app/seq-", b"s", sequence=True)
zk.create("/secret", b"hidden", acl=[make_digest_acl("u", "p", all=True)])
zk.create("/deep/a/b/c", b"", makepath=True)
t = zk.transaction()
t.create("/multi1", b"m")
t.set_data("/app/n00", b"in a multi")
t.delete("/app/n02")
t.commit()
zk.create("/app/ephemeral", b"e", ephemeral=True)  # removed when the session closes
zk.stop()
zk.close()
# Read the final tree with a fresh session (the ephemeral is gone).
zk = KazooClient(hosts="127.0.0.1:" + port, timeout=5)
zk.start(timeout=10)
zk.add_auth("digest", "u:p")
nodes = {}
def walk(path):
    data, st = zk.get(path)
    nodes[path] = {"data": data.decode("latin-1"), "czxid": st.czxid, "mzxid": st.mzxid,
                   "pzxid": st.pzxid, "ctime": st.ctime, "mtime": st.mtime, "version": st.version,
                   "cversion": st.cversion, "aversion": st.aversion, "ephemeralOwner": st.ephemeralOwner,
                   "numChildren": st.numChildren, "dataLength": st.dataLength}
    for c in sorted(zk.get_children(path)):
        walk(path.rstrip("/") + "/" + c)
walk("/")
zk.stop()
zk.close()
with open(expected, "w") as f:
    json.dump(nodes, f, indent=1, sort_keys=True)
PY
kill "$zkpid"; wait "$zkpid" 2>/dev/null || true; zkpid=
rm -rf "$out/version-2"
cp -r "$work/data/version-2" "$out/version-2"
# Cut the zero padding (64 MiB per log file) so the files can be checked in;
# a log ends at its file end as well as at zeros.
/usr/bin/python3 - "$out/version-2" <<'PY'
import os, sys
d = sys.argv[1]
for n in os.listdir(d):
    if n.startswith("log."):
        p = os.path.join(d, n)
        b = open(p, "rb").read()
        open(p, "wb").write(b.rstrip(b"\0"))
PY
ls -la "$out/version-2"
