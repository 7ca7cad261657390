"""Helpers for scripts that read a ZooKeeper tree through kazoo: connect
with a deadline while the server starts, and read every node with its stat.
Scripts put scripts/lib on PYTHONPATH and `import zktree`."""

import logging
import sys
import time

from kazoo.client import KazooClient


def connect(port, deadline_s=60):
    """A started KazooClient on 127.0.0.1:port, polling until the server
    answers; exits the script if it does not within deadline_s."""
    logging.disable(logging.ERROR)  # kazoo's complaints while the server starts
    deadline = time.time() + deadline_s
    while True:
        zk = KazooClient(hosts="127.0.0.1:%s" % port, timeout=5, connection_retry={"max_tries": 0})
        try:
            zk.start(timeout=3)
            return zk
        except Exception:
            zk.close()
            if time.time() > deadline:
                sys.exit("ZooKeeper did not answer within %d s" % deadline_s)
            time.sleep(0.2)


def read_tree(zk):
    """Every node below / that zk may read: path -> its data (latin-1) and
    stat fields, as expected.json files hold them."""
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
    return nodes
