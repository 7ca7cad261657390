// GoldenDriver drives Debian's ZooKeeper 3.8 Java client through wire's
// recording proxy. It lives in the client's package so that it can also send
// records no public API sends (a create2 op inside a multi, deleteContainer)
// through the client's own connection.
//
//   java -cp GoldenDriver-classes:zookeeper jars org.apache.zookeeper.GoldenDriver main|sasl HOST:PORT [PROXY_PID]
package org.apache.zookeeper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.InputArchive;
import org.apache.jute.OutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.MultiHeader;
import org.apache.zookeeper.proto.ReplyHeader;
import org.apache.zookeeper.proto.RequestHeader;
import org.apache.zookeeper.proto.SetDataRequest;

public class GoldenDriver {
    // Raw sends bytes already in jute form and ignores the reply's body.
    static final class Raw implements Record {
        final byte[] bytes;
        Raw(byte[] bytes) { this.bytes = bytes; }
        public void serialize(OutputArchive a, String tag) throws IOException {
            for (byte b : bytes) { a.writeByte(b, "b"); }
        }
        public void deserialize(InputArchive a, String tag) {}
    }

    static final LinkedBlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();

    static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    static ZooKeeper connect(String server) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(server, 4000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected && e.getType() == Watcher.Event.EventType.None) {
                up.countDown();
            }
            events.add(e);
        });
        if (!up.await(20, TimeUnit.SECONDS)) { throw new IllegalStateException("no session"); }
        return zk;
    }

    static ReplyHeader raw(ZooKeeper zk, int op, byte[] body) throws Exception {
        RequestHeader h = new RequestHeader();
        h.setType(op);
        return zk.cnxn.submitRequest(h, new Raw(body), new Raw(new byte[0]), null);
    }

    static WatchedEvent awaitEvent(Watcher.Event.EventType type) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            WatchedEvent e = events.poll(1, TimeUnit.SECONDS);
            if (e != null && e.getType() == type) { return e; }
        }
        throw new IllegalStateException("no " + type + " event");
    }

    static WatchedEvent awaitState(Watcher.Event.KeeperState state) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            WatchedEvent e = events.poll(1, TimeUnit.SECONDS);
            if (e != null && e.getType() == Watcher.Event.EventType.None && e.getState() == state) { return e; }
        }
        throw new IllegalStateException("no " + state + " state");
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0], server = args[1];
        if (mode.equals("sasl")) {
            ZooKeeper zk = connect(server);
            awaitState(Watcher.Event.KeeperState.SaslAuthenticated);
            System.out.println("whoAmI " + zk.whoAmI());
            zk.close();
            return;
        }
        List<ACL> open = ZooDefs.Ids.OPEN_ACL_UNSAFE;
        ZooKeeper zk = connect(server);
        Stat stat = new Stat();
        zk.create("/golden/java", b("j"), open, CreateMode.PERSISTENT, stat);                          // create2
        zk.create("/golden/java/ttl", b("t"), open, CreateMode.PERSISTENT_WITH_TTL, stat, 60000);     // createTTL
        zk.create("/golden/java/container", b("c"), open, CreateMode.CONTAINER, stat);               // createContainer
        zk.create("/golden/java/eph", b("e"), open, CreateMode.EPHEMERAL);                            // create
        String seq = zk.create("/golden/java/seq-", b("s"), open, CreateMode.PERSISTENT_SEQUENTIAL);

        // A multi with every create flavour, create2 included (no public API sends that one).
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        BinaryOutputArchive a = BinaryOutputArchive.getArchive(buf);
        new MultiHeader(ZooDefs.OpCode.create, false, -1).serialize(a, "h");
        new CreateRequest("/golden/java/m-create", b("1"), open, 0).serialize(a, "r");
        new MultiHeader(ZooDefs.OpCode.create2, false, -1).serialize(a, "h");
        new CreateRequest("/golden/java/m-create2", b("2"), open, 0).serialize(a, "r");
        new MultiHeader(ZooDefs.OpCode.setData, false, -1).serialize(a, "h");
        new SetDataRequest("/golden/java", b("multi"), -1).serialize(a, "r");
        new MultiHeader(-1, true, -1).serialize(a, "h");
        raw(zk, ZooDefs.OpCode.multi, buf.toByteArray());
        zk.multi(Arrays.asList(
            Op.create("/golden/java/m-ttl", b("3"), open, CreateMode.PERSISTENT_WITH_TTL, 60000),
            Op.create("/golden/java/m-container", b("4"), open, CreateMode.CONTAINER),
            Op.check("/golden/java/m-create", 0),
            Op.delete("/golden/java/m-create", -1)));
        zk.multi(Arrays.asList(                                                                        // multiRead
            Op.getData("/golden/java"),
            Op.getChildren("/golden/java/container"),
            Op.getData("/golden/java/missing")));

        zk.getEphemerals("/golden/java");
        zk.getAllChildrenNumber("/golden/java");
        zk.whoAmI();
        zk.addAuthInfo("digest", b("carol:secret"));
        zk.whoAmI();

        // checkWatches (one watcher) and removeWatches (all of a kind).
        Watcher one = e -> events.add(e);
        zk.getData("/golden/java/container", one, stat);
        zk.removeWatches("/golden/java/container", one, Watcher.WatcherType.Data, false);
        zk.getChildren("/golden/java/container", true);
        zk.removeAllWatches("/golden/java/container", Watcher.WatcherType.Children, false);
        try {
            zk.removeAllWatches("/golden/java/container", Watcher.WatcherType.Any, false);
            throw new IllegalStateException("removeWatches without a watch succeeded");
        } catch (KeeperException.NoWatcherException expected) {
        }

        // A client-sent deleteContainer: the path's bytes with no length.
        raw(zk, ZooDefs.OpCode.deleteContainer, b("/golden/java/container"));

        // Persistent watches, an event from each, then setWatches2 on reconnect.
        zk.addWatch("/golden/java", AddWatchMode.PERSISTENT_RECURSIVE);
        zk.addWatch(seq, AddWatchMode.PERSISTENT);
        zk.exists("/golden/java/later", true);
        zk.setData(seq, b("changed"), -1);
        awaitEvent(Watcher.Event.EventType.NodeDataChanged);
        CountDownLatch synced = new CountDownLatch(1);
        zk.sync("/golden/java", (rc, path, ctx) -> synced.countDown(), null);
        synced.await(20, TimeUnit.SECONDS);
        if (args.length > 2) {
            new ProcessBuilder("kill", "-USR1", args[2]).inheritIO().start().waitFor();
            awaitState(Watcher.Event.KeeperState.Disconnected);
            awaitState(Watcher.Event.KeeperState.SyncConnected);
        }
        zk.exists("/golden/java", false);
        zk.close();
    }
}
