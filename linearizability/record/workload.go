package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zabd/zabd/wire"
)

// Workload describes a recorded run against a real server.
type Workload struct {
	Servers        []string
	Clients        int           // concurrent workers (default 4)
	Duration       time.Duration // how long the workers run (default 3s)
	SessionTimeout time.Duration // requested session timeout (default 2s)
	Seed           uint64        // chooses every operation
	// Expire, if set, freezes one more client holding an ephemeral and a
	// watch until its session is seen expired, then thaws it.
	Expire bool
	Root   string // parent of every path the workload touches (default /lin)
}

func (w *Workload) defaults() {
	if w.Clients <= 0 {
		w.Clients = 4
	}
	if w.Duration <= 0 {
		w.Duration = 3 * time.Second
	}
	if w.SessionTimeout <= 0 {
		w.SessionTimeout = 2 * time.Second
	}
	if w.Root == "" {
		w.Root = "/lin"
	}
}

// Run records the workload into out: setup, concurrent random workers
// (every op, conditional versions, sequential and ephemeral creates,
// multis, syncs, watches), the optional expiry of a frozen client, and
// finally one client reading every path (the final state) before all close.
func (w Workload) Run(ctx context.Context, out io.Writer) error {
	w.defaults()
	rec := New(out)
	setup, err := rec.Connect(w.Servers, w.SessionTimeout)
	if err != nil {
		return errors.Join(err, rec.Close())
	}
	if _, err := setup.Create(w.Root, []byte("root"), wire.ModePersistent); err != nil {
		return errors.Join(fmt.Errorf("record: create %s: %w", w.Root, err), rec.Close())
	}
	if _, err := setup.Create(w.Root+"/q", nil, wire.ModePersistent); err != nil {
		return errors.Join(fmt.Errorf("record: create %s/q: %w", w.Root, err), rec.Close())
	}
	workers := make([]*Client, w.Clients)
	for i := range workers {
		if workers[i], err = rec.Connect(w.Servers, w.SessionTimeout); err != nil {
			return errors.Join(err, rec.Close())
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, w.Duration)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.Seed, uint64(i)))
			for n := 0; runCtx.Err() == nil; n++ {
				w.randomOp(c, rng, fmt.Sprintf("c%d-%d", c.ID(), n))
			}
		}()
	}
	var expireErr error
	if w.Expire {
		expireErr = w.expireOne(runCtx, rec, setup)
	}
	wg.Wait()
	w.finalReads(setup)
	for _, c := range workers {
		c.Close()
	}
	setup.Close()
	return errors.Join(expireErr, rec.Close())
}

// paths is the small path space the workers share.
func (w *Workload) paths() []string {
	out := make([]string, 4)
	for i := range out {
		out[i] = fmt.Sprintf("%s/k%d", w.Root, i)
	}
	return out
}

func (w *Workload) randomOp(c *Client, rng *rand.Rand, value string) {
	paths := w.paths()
	p := paths[rng.IntN(len(paths))]
	version := int32(rng.IntN(3)) - 1 // -1 (any), 0 or 1
	switch rng.IntN(12) {
	case 0:
		mode := []wire.CreateMode{wire.ModePersistent, wire.ModeEphemeral}[rng.IntN(2)]
		c.Create(p, []byte(value), mode)
	case 1:
		mode := []wire.CreateMode{wire.ModePersistentSequential, wire.ModeEphemeralSequential}[rng.IntN(2)]
		c.Create(w.Root+"/q/n", []byte(value), mode)
	case 2:
		c.Delete(p, version)
	case 3, 4:
		c.Set(p, []byte(value), version)
	case 5, 6:
		c.Get(p, rng.IntN(2) == 0)
	case 7:
		c.Exists(p, rng.IntN(2) == 0)
	case 8:
		c.Children(w.Root, rng.IntN(2) == 0)
	case 9:
		c.Multi(&zk.CheckVersionRequest{Path: p, Version: version},
			&zk.SetDataRequest{Path: paths[rng.IntN(len(paths))], Data: []byte(value), Version: -1})
	case 10:
		c.Multi(&zk.CreateRequest{Path: p, Data: []byte(value), Acl: zk.WorldACL(zk.PermAll)},
			&zk.DeleteRequest{Path: paths[rng.IntN(len(paths))], Version: -1})
	case 11:
		c.Sync(p)
		c.Get(p, false)
	}
}

// expireOne freezes a client that holds an ephemeral and a watch, waits
// (polling with a deadline) until another client sees the ephemeral gone,
// then thaws it so that it learns of the expiry and carries on in a new
// session.
func (w *Workload) expireOne(ctx context.Context, rec *Recorder, observer *Client) error {
	victim, err := rec.Connect(w.Servers, w.SessionTimeout)
	if err != nil {
		return err
	}
	defer victim.Close()
	eph := w.Root + "/victim"
	if _, err := victim.Create(eph, []byte("alive"), wire.ModeEphemeral); err != nil {
		return fmt.Errorf("record: victim create %s: %w", eph, err)
	}
	victim.Get(w.Root+"/k0", true)
	frozenSession := victim.SessionID()
	victim.Freeze()
	// A write sent while frozen never reaches the server: the client records
	// it as ConnectionLoss, an outcome the checkers must treat as unknown.
	lost := make(chan struct{})
	go func() {
		defer close(lost)
		victim.Set(w.Root+"/k1", []byte("lost"), -1)
	}()
	deadline := time.Now().Add(4*w.SessionTimeout + 10*time.Second)
	for {
		ok, err := observer.Exists(eph, false)
		if err == nil && !ok {
			break
		}
		if time.Now().After(deadline) {
			victim.Thaw()
			return fmt.Errorf("record: the frozen session of client %d did not expire by %v", victim.ID(), deadline)
		}
		time.Sleep(100 * time.Millisecond) // polling a real server, not synchronising
	}
	victim.Thaw()
	<-lost
	for victim.SessionID() == frozenSession || victim.conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			return fmt.Errorf("record: client %d did not reconnect after its expiry", victim.ID())
		}
		time.Sleep(50 * time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(w.Seed, 1<<32))
	for n := 0; n < 20 && ctx.Err() == nil; n++ {
		w.randomOp(victim, rng, fmt.Sprintf("c%d-%d", victim.ID(), n))
	}
	return nil
}

// finalReads reads every path once all workers stopped: the final state
// the durability checker compares with the acknowledged writes. It syncs
// first: a member of an ensemble answers reads from its own tree, which may
// not yet hold the last writes other members acknowledged.
func (w *Workload) finalReads(c *Client) {
	c.Sync(w.Root)
	for _, p := range append(w.paths(), w.Root+"/victim") {
		c.Get(p, false)
	}
	kids, _ := c.Children(w.Root+"/q", false)
	for _, k := range kids {
		c.Get(w.Root+"/q/"+k, false)
	}
}
