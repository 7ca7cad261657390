"""Checks that zktop (Debian's package) parses zabd's four-letter words.

zktop has no batch mode, and its UI swallows parse errors (a server it
cannot parse shows as "Unavailable" with zero nodes). So this first runs
zktop's own parser (zktop.ZKServer, which sends `stat`) and asserts that it
succeeded, then runs the real curses UI in a pseudo-terminal for a few
seconds, quits it with 'q' and checks the screen shows the server as
standalone with a node count, and no traceback.

Usage: python3 zktop_check.py host:port
"""
import os
import pty
import re
import select
import struct
import sys
import termios
import fcntl
import time

addr = sys.argv[1]
host, port = addr.rsplit(":", 1)


def check(cond, what):
    if not cond:
        raise SystemExit("zktop: " + what)
    print("  ok:", what)


# zktop parses its options when imported.
sys.argv = ["zktop", "--servers", addr, "-t", "5"]
import zktop  # noqa: E402

srv = zktop.ZKServer(addr, 0)
check(not srv.unavailable, "zktop's parser reads zabd's stat")
check(srv.version == "3.8.0", "version 3.8.0 (got %r)" % srv.version)
check(srv.mode == "standalone", "mode standalone (got %r)" % srv.mode)
nodes = int(srv.node_count)
check(nodes >= 4, "node count %d (/, /zookeeper and its two children at least)" % nodes)
check(int(srv.zxid, 16) > 0, "zxid %s" % srv.zxid)
check(len(srv.sessions) >= 1 and all(s.host == "127.0.0.1" for s in srv.sessions),
      "%d client lines parsed" % len(srv.sessions))
float(srv.avg_latency), int(srv.min_latency), int(srv.max_latency)

pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.execvp("zktop", ["zktop", "--servers", addr, "-t", "5"])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))


def read_for(seconds, out):
    deadline = time.time() + seconds
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child exited
            return out, True
        if not chunk:
            return out, True
        out += chunk
    return out, False


screen, _ = read_for(4, b"")
os.write(fd, b"q")
screen, exited = read_for(10, screen)
if not exited:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
text = screen.decode(errors="replace")
check("Traceback" not in text, "zktop's UI ran without a traceback")
check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "zktop quit on 'q' with status 0 (%d)" % status)
# Not necessarily the same count: earlier clients' sessions may expire meanwhile.
shown = re.search(r"Ensemble -- nodecount:(\d+) ", text)
check(shown is not None and int(shown.group(1)) >= 4, "zktop's UI shows the node count (%s)" % (shown and shown.group(1)))
check(re.search(r"%s\S*\s*\S*%s S" % (re.escape(host), port), text) is not None,
      "zktop's UI lists %s:%s in mode S(tandalone)" % (host, port))
