// CuratorCompat drives a ZooKeeper-compatible server with Apache Curator
// (Debian's libcurator-*-java): plain operations, an InterProcessMutex
// shared by several threads each with its own client, LeaderLatch,
// DistributedAtomicLong, CuratorCache events and a persistent-recursive
// watch. It prints one "ok:" line per check and exits 1 on the first
// failure. Usage: java CuratorCompat host:port
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.data.Stat;

public class CuratorCompat {
    static final String ROOT = "/curator";
    static final int WORKERS = 4, INCREMENTS = 15;
    static String addr;

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CuratorCompat host:port");
            System.exit(2);
        }
        addr = args[0];
        try {
            run();
        } catch (Throwable t) {
            System.err.println("curator: FAIL: " + t);
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0); // Curator's and ZooKeeper's threads are not all daemons
    }

    static CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(addr, 10000, 5000, new ExponentialBackoffRetry(100, 5));
        c.start();
        check(c.blockUntilConnected(20, TimeUnit.SECONDS), "client connected");
        return c;
    }

    // Worker is what each of runWorkers' threads does with its own client.
    interface Worker {
        void run(CuratorFramework c) throws Exception;
    }

    // runWorkers runs WORKERS threads, each with a client of its own, waits
    // up to 120 s for each and fails if any of them failed.
    static void runWorkers(String what, Worker worker) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            Thread t = new Thread(() -> {
                try (CuratorFramework c = client()) {
                    worker.run(c);
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(120000);
        }
        check(errors.isEmpty(), what + " workers failed: " + errors);
    }

    static void check(boolean cond, String what) {
        if (!cond) {
            throw new AssertionError(what);
        }
    }

    static void ok(String what) {
        System.out.println("  ok: " + what);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static void run() throws Exception {
        try (CuratorFramework c = client()) {
            crud(c);
            mutex(c);
            leaderLatch();
            atomicLong(c);
            cache(c);
            persistentRecursiveWatch(c);
            c.delete().deletingChildrenIfNeeded().forPath(ROOT);
            check(c.checkExists().forPath(ROOT) == null, "cleanup");
            ok("cleanup: deletingChildrenIfNeeded");
        }
    }

    static void crud(CuratorFramework c) throws Exception {
        String path = c.create().creatingParentsIfNeeded().forPath(ROOT + "/crud/node", bytes("v0"));
        check(path.equals(ROOT + "/crud/node"), "create returns the path, got " + path);
        Stat st = new Stat();
        check(string(c.getData().storingStatIn(st).forPath(path)).equals("v0"), "getData");
        check(st.getVersion() == 0 && st.getDataLength() == 2, "stat of a new node: " + st);
        Stat after = c.setData().withVersion(0).forPath(path, bytes("v1"));
        check(after.getVersion() == 1, "setData bumps the version");
        try {
            c.setData().withVersion(0).forPath(path, bytes("stale"));
            throw new AssertionError("setData with a stale version succeeded");
        } catch (KeeperException.BadVersionException expected) {
            // as ZooKeeper answers
        }
        String seq = c.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(ROOT + "/crud/seq-");
        check(seq.equals(ROOT + "/crud/seq-0000000001"), "sequential name after one child, got " + seq);
        List<String> children = new ArrayList<>(c.getChildren().forPath(ROOT + "/crud"));
        children.sort(null);
        check(children.equals(Arrays.asList("node", "seq-0000000001")), "getChildren, got " + children);
        c.delete().withVersion(1).forPath(path);
        check(c.checkExists().forPath(path) == null, "delete");
        try {
            c.delete().forPath(path);
            throw new AssertionError("deleting a missing node succeeded");
        } catch (KeeperException.NoNodeException expected) {
            // as ZooKeeper answers
        }
        ok("create, getData, setData (versioned, BadVersion), sequential, getChildren, delete (NoNode)");
    }

    static void mutex(CuratorFramework main) throws Exception {
        String counter = ROOT + "/mutex-counter";
        main.create().forPath(counter, bytes("0"));
        runWorkers("mutex", c -> {
            InterProcessMutex lock = new InterProcessMutex(c, ROOT + "/mutex");
            for (int n = 0; n < INCREMENTS; n++) {
                check(lock.acquire(30, TimeUnit.SECONDS), "acquire the mutex");
                try {
                    Stat st = new Stat();
                    int v = Integer.parseInt(string(c.getData().storingStatIn(st).forPath(counter)));
                    c.setData().withVersion(st.getVersion()).forPath(counter, bytes(Integer.toString(v + 1)));
                } finally {
                    lock.release();
                }
            }
        });
        int got = Integer.parseInt(string(main.getData().forPath(counter)));
        check(got == WORKERS * INCREMENTS, "mutex counter " + got + ", want " + WORKERS * INCREMENTS);
        ok("InterProcessMutex: " + WORKERS + " clients x " + INCREMENTS + " increments = " + got);
    }

    static void leaderLatch() throws Exception {
        try (CuratorFramework c1 = client(); CuratorFramework c2 = client()) {
            LeaderLatch first = new LeaderLatch(c1, ROOT + "/latch", "one");
            LeaderLatch second = new LeaderLatch(c2, ROOT + "/latch", "two");
            first.start();
            check(first.await(20, TimeUnit.SECONDS), "first latch leads");
            second.start();
            check(!second.await(500, TimeUnit.MILLISECONDS), "second latch waits while the first leads");
            check(first.getLeader().getId().equals("one") && first.getParticipants().size() == 2, "participants and leader");
            first.close();
            check(second.await(20, TimeUnit.SECONDS), "second latch leads once the first closes");
            check(second.getLeader().getId().equals("two"), "leader is two");
            second.close();
        }
        ok("LeaderLatch: one leader, hand-over on close");
    }

    static void atomicLong(CuratorFramework main) throws Exception {
        runWorkers("atomic long", c -> {
            DistributedAtomicLong n = new DistributedAtomicLong(c, ROOT + "/atomic", new RetryNTimes(1000, 5));
            for (int k = 0; k < INCREMENTS; k++) {
                AtomicValue<Long> v = n.increment();
                check(v.succeeded(), "increment succeeded");
            }
        });
        long got = new DistributedAtomicLong(main, ROOT + "/atomic", new RetryNTimes(10, 5)).get().postValue();
        check(got == WORKERS * INCREMENTS, "atomic long " + got + ", want " + WORKERS * INCREMENTS);
        ok("DistributedAtomicLong: " + WORKERS + " clients x " + INCREMENTS + " increments = " + got);
    }

    static String poll(BlockingQueue<String> q) throws InterruptedException {
        String e = q.poll(10, TimeUnit.SECONDS);
        check(e != null, "an event within 10 s");
        return e;
    }

    static void cache(CuratorFramework c) throws Exception {
        String base = ROOT + "/cache";
        c.create().forPath(base);
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        CuratorCache cache = CuratorCache.build(c, base);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreates(n -> events.add("created " + n.getPath()))
                .forChanges((before, after) -> events.add("changed " + after.getPath() + " " + string(after.getData())))
                .forDeletes(n -> events.add("deleted " + n.getPath()))
                .build());
        cache.start();
        check(poll(events).equals("created " + base), "the cache reports the existing root first");
        try (CuratorFramework other = client()) {
            other.create().forPath(base + "/a", bytes("1"));
            check(poll(events).equals("created " + base + "/a"), "cache: child created");
            other.setData().forPath(base + "/a", bytes("2"));
            check(poll(events).equals("changed " + base + "/a 2"), "cache: data changed");
            other.create().forPath(base + "/a/deep", bytes("x"));
            check(poll(events).equals("created " + base + "/a/deep"), "cache: grandchild created");
            other.delete().deletingChildrenIfNeeded().forPath(base + "/a");
            List<String> deletes = Arrays.asList(poll(events), poll(events));
            check(deletes.contains("deleted " + base + "/a/deep") && deletes.contains("deleted " + base + "/a"), "cache: deletes " + deletes);
        }
        check(cache.size() == 1, "cache holds the root only, has " + cache.size());
        cache.close();
        ok("CuratorCache: create, change, grandchild, delete events");
    }

    static void persistentRecursiveWatch(CuratorFramework c) throws Exception {
        String base = ROOT + "/recursive";
        c.create().forPath(base);
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        c.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE)
                .usingWatcher((Watcher) (WatchedEvent e) -> {
                    if (e.getType() != EventType.None) {
                        events.add(e.getType() + " " + e.getPath());
                    }
                })
                .forPath(base);
        try (CuratorFramework other = client()) {
            other.create().forPath(base + "/x");
            other.create().forPath(base + "/x/y");
            other.setData().forPath(base + "/x/y", bytes("z"));
            other.delete().forPath(base + "/x/y");
        }
        List<String> want = Arrays.asList("NodeCreated " + base + "/x", "NodeCreated " + base + "/x/y",
                "NodeDataChanged " + base + "/x/y", "NodeDeleted " + base + "/x/y");
        List<String> got = new ArrayList<>();
        for (int i = 0; i < want.size(); i++) {
            got.add(poll(events));
        }
        check(got.equals(want), "recursive watch events " + got + ", want " + want);
        ok("persistent-recursive watch (addWatch): events for descendants, in order");
    }
}
