#!/usr/bin/env bash
# Records a data directory written by Debian's ZooKeeper 3.8 (standalone),
# with snapCount=20 so that it holds several log files and snapshots, and
# the tree it then serves (expected.json, every path with data and stat,
# read through kazoo). Run from the repository root:
#   zab/storage/testdata/zk38/record.sh
# It replaces zab/storage/testdata/zk38/{version-2,expected.json}.
set -euo pipefail
out="$(cd "$(dirname "$0")" && pwd)"
lib="$out/../../../../scripts/lib"
source "$lib/zookeeper.sh"
work="$(mktemp -d)"
port="$(free_port)"
cleanup() { zk_stop; rm -rf "$work"; }
trap cleanup EXIT
write_zoo_cfg "$work/zoo.cfg" "$work/data" "$port" snapCount=20 autopurge.purgeInterval=0
zk_start "$work/zoo.cfg" "$work/zk.log"
PYTHONPATH="$lib" /usr/bin/python3 - "$port" "$out/expected.json" <<'PY'
import json, sys
from kazoo.security import make_digest_acl
import zktree
port, expected = sys.argv[1], sys.argv[2]
zk = zktree.connect(port)
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
zk = zktree.connect(port)
zk.add_auth("digest", "u:p")
nodes = zktree.read_tree(zk)
zk.stop()
zk.close()
with open(expected, "w") as f:
    json.dump(nodes, f, indent=1, sort_keys=True)
PY
zk_stop
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
