"""Drive kazoo 2.8 through wire's recording proxy.

    /usr/bin/python3 kazoo_driver.py HOST:PORT PROXY_PID
"""
import os
import signal
import sys
import threading

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

server, proxy_pid = sys.argv[1], int(sys.argv[2])
zk = KazooClient(hosts=server, timeout=4.0)
zk.start(timeout=20)

zk.create("/golden/kazoo", b"k", include_data=True)  # create2
zk.create("/golden/kazoo/eph", b"e", ephemeral=True)
zk.get_children("/golden/kazoo", include_data=True)  # getChildren2
zk.get_children("/golden/kazoo")  # getChildren
fired = threading.Event()
zk.get("/golden/kazoo", watch=lambda ev: fired.set())
zk.set("/golden/kazoo", b"kk")
if not fired.wait(20):
    sys.exit("no data watch event")
tx = zk.transaction()
tx.create("/golden/kazoo/t", b"t")
tx.check("/golden/kazoo", 1)
tx.set_data("/golden/kazoo/t", b"tt")
tx.delete("/golden/kazoo/t")
tx.commit()

# Watches to re-register after the cut; kazoo sends setWatches.
zk.exists("/golden/kazoo/later", watch=lambda ev: None)
zk.get_children("/golden/kazoo", watch=lambda ev: None)
lost, back = threading.Event(), threading.Event()


def listener(state):
    if state == KazooState.SUSPENDED:
        lost.set()
    elif state == KazooState.CONNECTED and lost.is_set():
        back.set()


zk.add_listener(listener)
os.kill(proxy_pid, signal.SIGUSR1)
if not back.wait(20):
    sys.exit("no reconnection")
zk.exists("/golden/kazoo")
zk.stop()
zk.close()
