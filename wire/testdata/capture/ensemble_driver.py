"""Drive the clients of capture.sh's ensemble capture with kazoo 2.8.

    /usr/bin/python3 ensemble_driver.py ops HOST:PORT              # many write types, two busy sessions
    /usr/bin/python3 ensemble_driver.py writes HOST:PORT N PREFIX   # N creates
    /usr/bin/python3 ensemble_driver.py move FROM:PORT TO:PORT LATE:PORT
        # a session moves (REVALIDATE, valid), is closed, then is resumed (REVALIDATE, not valid)
    /usr/bin/python3 ensemble_driver.py hold HOST:PORT PATH DIR     # an ephemeral node, held until DIR/go
    /usr/bin/python3 ensemble_driver.py unacked HOST:PORT PATH DIR  # connect, touch DIR/ready, await DIR/go, create

Each write to a learner is forwarded to the leader as a REQUEST packet.
"""
import os
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry
from kazoo.security import make_digest_acl


def client(hosts, **kw):
    zk = KazooClient(hosts=hosts, timeout=10.0, **kw)
    zk.start(timeout=20)
    return zk


def ops(hosts):
    # Two sessions on one learner, busy for a few seconds, so that the
    # learner's ping replies carry both sessions' touches.
    a, b = client(hosts), client(hosts)
    a.create("/ops", b"o")
    a.create("/ops/eph-", b"e", ephemeral=True, sequence=True)
    a.set("/ops", b"oo")
    a.set_acls("/ops", [make_digest_acl("bob", "secret", all=True)] + list(a.get_acls("/ops")[0]))
    tx = a.transaction()
    tx.create("/ops/t", b"t")
    tx.check("/ops", 1)
    tx.set_data("/ops/t", b"tt")
    tx.delete("/ops/t")
    tx.commit()
    a.sync("/ops")
    for i in range(8):
        a.create("/ops/a%d" % i, b"a")
        b.create("/ops/b%d" % i, b"b")
        b.delete("/ops/b%d" % i)
        time.sleep(0.4)
    b.stop()  # closeSession
    b.close()
    a.stop()
    a.close()


def writes(hosts, n, prefix):
    zk = client(hosts)
    for i in range(n):
        zk.create("%s%d" % (prefix, i), b"w")
    zk.stop()
    zk.close()


def move(src, dst, late):
    # The same session, opened again on another server: that server asks
    # the leader whether the session is live (REVALIDATE).
    a = client(src)
    a.create("/moved", b"m", ephemeral=True)
    session = a.client_id
    b = client(dst, client_id=session)
    b.set("/moved", b"mm")
    b.stop()  # closeSession
    b.close()
    # The closed session, resumed on a third server: its password is right,
    # so that server asks the leader, which answers that it is not valid.
    c = KazooClient(hosts=late, timeout=10.0, client_id=session, connection_retry=KazooRetry(max_tries=0))
    try:
        c.start(timeout=5)
    except (KazooTimeoutError, KazooException):
        pass  # the server tells the client its session expired
    # The server dropped a's connection when the session moved, and c's;
    # they would retry with a closed session.
    os._exit(0)


def hold(hosts, path, sync_dir):
    # A live session with an ephemeral node while a follower is sent a
    # snapshot, which then carries both.
    zk = client(hosts)
    zk.create(path, b"h", ephemeral=True)
    open(os.path.join(sync_dir, "ready"), "w").close()
    while not os.path.exists(os.path.join(sync_dir, "go")):
        time.sleep(0.1)
    zk.stop()  # closeSession, deleting the node
    zk.close()


def unacked(hosts, path, sync_dir):
    # The session is opened while the ensemble is whole (creating it needs a
    # quorum); then capture.sh cuts the other servers off from this one and
    # the create is logged here and proposed, but never acknowledged.
    # A long session timeout: the new leader would expire the session, a txn
    # of the new epoch, before the old leader is back, and the old leader
    # would then be sent a snapshot instead of TRUNC.
    zk = KazooClient(hosts=hosts, timeout=40.0)
    zk.start(timeout=20)
    open(os.path.join(sync_dir, "ready"), "w").close()
    while not os.path.exists(os.path.join(sync_dir, "go")):
        time.sleep(0.1)
    zk.create_async(path, b"u")
    time.sleep(2)
    os._exit(0)  # no closeSession: the server is about to be killed


cmd = sys.argv[1]
if cmd == "ops":
    ops(sys.argv[2])
elif cmd == "writes":
    writes(sys.argv[2], int(sys.argv[3]), sys.argv[4])
elif cmd == "move":
    move(sys.argv[2], sys.argv[3], sys.argv[4])
elif cmd == "hold":
    hold(sys.argv[2], sys.argv[3], sys.argv[4])
elif cmd == "unacked":
    unacked(sys.argv[2], sys.argv[3], sys.argv[4])
else:
    sys.exit("unknown command " + cmd)
