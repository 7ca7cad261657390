// Command gozk drives go-zookeeper/zk v1.0.4 through the recording proxy, so
// that wire's golden vectors hold what that client sends and what ZooKeeper
// answers. Every step is fixed; only session ids, zxids and times vary.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

func main() {
	server := flag.String("server", "127.0.0.1:21811", "the recording proxy")
	proxyPid := flag.Int("proxy-pid", 0, "the proxy's pid, signalled to cut the connection")
	flag.Parse()
	if err := run(*server, *proxyPid); err != nil {
		log.Fatal(err)
	}
}

// must fails the run on an unexpected error; wantErr on an expected one missing.
func must(err error, what string) {
	if err != nil {
		log.Fatalf("%s: %v", what, err)
	}
}

func wantErr(err, want error, what string) {
	if !errors.Is(err, want) {
		log.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

func run(server string, proxyPid int) error {
	c, events, err := zk.Connect([]string{server}, 4*time.Second, zk.WithLogger(log.New(os.Stderr, "zk ", 0)))
	if err != nil {
		return err
	}
	waitState(events, zk.StateHasSession)
	open := zk.WorldACL(zk.PermAll)

	_, err = c.Create("/golden", []byte("root"), zk.FlagPersistent, open)
	must(err, "create /golden")
	_, err = c.Create("/golden/gozk", []byte("hello"), zk.FlagPersistent, open)
	must(err, "create /golden/gozk")
	_, err = c.Create("/golden/gozk/seq-", []byte("s"), zk.FlagEphemeralSequential, open)
	must(err, "create ephemeral sequential")
	_, err = c.CreateContainer("/golden/gozk/container", []byte("c"), zk.FlagContainer, open)
	must(err, "createContainer")
	_, err = c.CreateTTL("/golden/gozk/ttl", []byte("t"), zk.FlagTTL, open, time.Minute)
	must(err, "createTTL")
	_, _, err = c.Exists("/golden/gozk")
	must(err, "exists")
	_, _, _, err = c.ExistsW("/golden/gozk/later")
	must(err, "exists missing with watch")

	_, _, dataW, err := c.GetW("/golden/gozk")
	must(err, "getData with watch")
	_, err = c.Set("/golden/gozk", []byte("world"), 0)
	must(err, "setData")
	<-dataW
	_, _, err = c.Children("/golden/gozk")
	must(err, "getChildren2")
	_, _, err = c.GetACL("/golden/gozk")
	must(err, "getACL")
	_, err = c.SetACL("/golden/gozk", []zk.ACL{
		{Perms: zk.PermAll, Scheme: "world", ID: "anyone"},
		{Perms: zk.PermRead, Scheme: "ip", ID: "127.0.0.1"},
	}, 0)
	must(err, "setACL")
	_, err = c.Sync("/golden/gozk")
	must(err, "sync")

	_, err = c.Multi(
		&zk.CreateRequest{Path: "/golden/gozk/m1", Data: []byte("m"), Acl: open, Flags: zk.FlagPersistent},
		&zk.SetDataRequest{Path: "/golden/gozk", Data: []byte("multi"), Version: -1},
		&zk.CheckVersionRequest{Path: "/golden/gozk/m1", Version: 0},
		&zk.DeleteRequest{Path: "/golden/gozk/m1", Version: -1},
	)
	must(err, "multi")
	_, err = c.Multi(
		&zk.CreateRequest{Path: "/golden/gozk/m2", Data: []byte("m"), Acl: open, Flags: zk.FlagPersistent},
		&zk.CheckVersionRequest{Path: "/golden/gozk", Version: 99},
		&zk.DeleteRequest{Path: "/golden/gozk/ttl", Version: -1},
	)
	wantErr(err, zk.ErrBadVersion, "failing multi")

	must(c.Delete("/golden/gozk/ttl", -1), "delete")
	_, _, err = c.Get("/golden/nope")
	wantErr(err, zk.ErrNoNode, "getData missing")
	_, err = c.IncrementalReconfig([]string{"server.2=127.0.0.1:2888:3888;2181"}, nil, -1)
	if err == nil {
		return fmt.Errorf("reconfig on a standalone server succeeded")
	}
	must(c.AddAuth("digest", []byte("alice:secret")), "addAuth")

	// Watches to re-register after the cut: data, exist and child.
	_, _, _, err = c.GetW("/golden/gozk")
	must(err, "getData watch")
	_, _, _, err = c.ChildrenW("/golden/gozk")
	must(err, "getChildren watch")
	if proxyPid != 0 {
		must(syscall.Kill(proxyPid, syscall.SIGUSR1), "signal proxy")
		waitState(events, zk.StateDisconnected)
		waitState(events, zk.StateHasSession)
	}
	// Idle long enough for a ping (a third of the session timeout).
	time.Sleep(2 * time.Second)
	c.Close()
	return nil
}

func waitState(events <-chan zk.Event, want zk.State) {
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && ev.State == want {
				return
			}
		case <-deadline:
			log.Fatalf("no %v within 20s", want)
		}
	}
}
