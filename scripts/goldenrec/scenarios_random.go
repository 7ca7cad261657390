package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/zabd/zabd/datatree/trace"
	"github.com/zabd/zabd/wire"
)

func init() {
	scenarios = append(scenarios,
		scenario{name: "random", desc: "a seeded random workload: three sessions, every create mode but TTL reaping, right and wrong versions, ACLs, multis, watches, pipelines, sessions closing and new ones opening, over a small namespace so that operations collide", config: append(append([]string{}, baseConfig...), "snapCount=100000"), script: func(r *run) { randomWorkload(r, randomSeed, randomProfile{pipelines: 7}) }},
		scenario{name: "random_watches", desc: "a seeded random workload weighted to watches: one-shot, persistent and recursive watches, removeWatches/checkWatches, reconnects with setWatches, nodes only some sessions may read", config: append(append([]string{}, baseConfig...), "snapCount=100000"), script: func(r *run) { randomWorkload(r, randomSeed+1, randomProfile{watchy: true, pipelines: 7}) }},
		scenario{name: "random_pipeline", desc: "a seeded random workload made mostly of pipelines (up to eight requests prepared against each other's pending changes) with frequent ACL changes", config: append(append([]string{}, baseConfig...), "snapCount=100000"), script: func(r *run) { randomWorkload(r, randomSeed+2, randomProfile{pipelines: 60, aclHeavy: true}) }},
	)
}

// The random workload overrides snapCount (zoo.cfg's last value wins) so its
// thousands of txns stay in one log file.

// randomSeed fixes the workload, so re-recording replays the same script
// (up to the server's session ids and times, and the names it picks).
const randomSeed = 20261121

const randomSteps = 1500

// randomGen draws requests over a small namespace.
// randomProfile weights a random workload.
type randomProfile struct {
	// watchy adds watch requests and reconnects.
	watchy bool
	// pipelines is the share (percent) of steps that send a pipeline.
	pipelines int
	// aclHeavy makes setACL and restrictive ACLs frequent.
	aclHeavy bool
}

type randomGen struct {
	rng *rand.Rand
	randomProfile
	// known are paths seen to exist (created or listed), for deletes and
	// reads to hit often.
	known []string
}

var randomNames = []string{"a", "b", "c"}

func (g *randomGen) path() string {
	if len(g.known) > 0 && g.rng.IntN(3) > 0 {
		return g.known[g.rng.IntN(len(g.known))]
	}
	depth := 1 + g.rng.IntN(3)
	p := ""
	for i := 0; i < depth; i++ {
		p += "/" + randomNames[g.rng.IntN(len(randomNames))]
	}
	return p
}

func (g *randomGen) version() int32 {
	if g.rng.IntN(3) == 0 {
		return int32(g.rng.IntN(3))
	}
	return -1
}

func (g *randomGen) data() string {
	return fmt.Sprintf("d%d", g.rng.IntN(100))[:1+g.rng.IntN(2)]
}

var randomACLs = [][]wire.ACL{
	wire.OpenACLUnsafe,
	wire.ReadACLUnsafe,
	wire.CreatorAllACL,
	{worldACL(wire.PermRead | wire.PermCreate | wire.PermDelete)},
	{digestACL(wire.PermAll, "alice", "pw"), worldACL(wire.PermRead)},
}

func (g *randomGen) acl() []wire.ACL {
	if !g.aclHeavy && g.rng.IntN(4) > 0 {
		return wire.OpenACLUnsafe
	}
	return randomACLs[g.rng.IntN(len(randomACLs))]
}

func (g *randomGen) mode() wire.CreateMode {
	switch g.rng.IntN(8) {
	case 0:
		return wire.ModeEphemeral
	case 1:
		return wire.ModePersistentSequential
	case 2:
		return wire.ModeEphemeralSequential
	case 3:
		return wire.ModeContainer
	}
	return wire.ModePersistent
}

// writeOp draws one write that may appear in a multi.
func (g *randomGen) writeOp() trace.SubOp {
	p := g.path()
	switch g.rng.IntN(10) {
	case 0, 1, 2, 3:
		m := g.mode()
		op := opCreate(p, g.data(), m)
		op.Req.ACL = g.acl()
		if m == wire.ModeContainer {
			op.Op = wire.OpCreateContainer.String()
		} else if g.rng.IntN(4) == 0 {
			op.Op = wire.OpCreate2.String()
		}
		return op
	case 4, 5:
		return opDelete(p, g.version())
	case 6, 7, 8:
		return opSetData(p, g.data(), g.version())
	}
	return opCheck(p, g.version())
}

// watchRequest draws a request about watches.
func (g *randomGen) watchRequest() trace.SubOp {
	p := g.path()
	types := []wire.WatcherType{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny}
	switch g.rng.IntN(6) {
	case 0:
		m := wire.AddWatchMode(g.rng.IntN(2))
		return pOp(wire.OpAddWatch, trace.Request{Path: p, AddWatchMode: &m})
	case 1:
		return pOp(wire.OpRemoveWatches, trace.Request{Path: p, WatcherType: types[g.rng.IntN(3)]})
	case 2:
		return pOp(wire.OpCheckWatches, trace.Request{Path: p, WatcherType: types[g.rng.IntN(3)]})
	case 3:
		return pOp(wire.OpGetData, trace.Request{Path: p, Watch: true})
	case 4:
		return pOp(wire.OpExists, trace.Request{Path: p, Watch: true})
	}
	return pOp(wire.OpGetChildren, trace.Request{Path: p, Watch: true})
}

// request draws one request of any kind.
func (g *randomGen) request() trace.SubOp {
	if g.watchy && g.rng.IntN(3) == 0 {
		return g.watchRequest()
	}
	p := g.path()
	switch g.rng.IntN(20) {
	case 0, 1:
		return pOp(wire.OpGetData, trace.Request{Path: p, Watch: g.rng.IntN(2) == 0})
	case 2:
		return pOp(wire.OpExists, trace.Request{Path: p, Watch: g.rng.IntN(2) == 0})
	case 3, 4:
		return pOp(wire.OpGetChildren2, trace.Request{Path: p, Watch: g.rng.IntN(2) == 0})
	case 5:
		return pOp(wire.OpSetACL, trace.Request{Path: p, ACL: g.acl(), Version: trace.Int32(g.version())})
	case 8, 9:
		if g.aclHeavy {
			return pOp(wire.OpSetACL, trace.Request{Path: p, ACL: g.acl(), Version: trace.Int32(g.version())})
		}
	case 6:
		return pOp(wire.OpGetACL, trace.Request{Path: p})
	case 7:
		n := 1 + g.rng.IntN(4)
		ops := make([]trace.SubOp, n)
		for i := range ops {
			ops[i] = g.writeOp()
		}
		return trace.SubOp{Op: wire.OpMulti.String(), Req: trace.Request{Ops: ops}}
	}
	op := g.writeOp()
	if op.Op == wire.OpCheck.String() {
		// A plain check that succeeds is never answered by 3.8.0.
		return pOp(wire.OpExists, trace.Request{Path: p})
	}
	return op
}

// some draws a short list of paths for setWatches.
func (g *randomGen) some() []string {
	out := []string{}
	for n := g.rng.IntN(3); n > 0; n-- {
		out = append(out, g.path())
	}
	return out
}

// learn remembers paths a reply shows to exist.
func (g *randomGen) learn(l trace.Line) {
	if l.Err != wire.ErrOK.String() || l.Resp == nil {
		return
	}
	add := func(p string) {
		for _, k := range g.known {
			if k == p {
				return
			}
		}
		if len(g.known) < 40 {
			g.known = append(g.known, p)
		}
	}
	if l.Resp.Path != "" {
		add(l.Resp.Path)
	}
	for _, r := range l.Resp.Results {
		if r.Path != "" {
			add(r.Path)
		}
	}
}

func randomWorkload(r *run, seed uint64, profile randomProfile) {
	g := &randomGen{rng: rand.New(rand.NewPCG(seed, 1)), randomProfile: profile}
	watchy := profile.watchy
	sessions := []string{"A", "B", "C"}
	for _, s := range sessions {
		r.Connect(s)
	}
	r.AddAuth("B", "digest", "alice:pw")
	generation := map[string]int{}
	for step := 0; step < randomSteps && r.err == nil; step++ {
		s := sessions[g.rng.IntN(len(sessions))]
		switch k := g.rng.IntN(100); {
		case k < 2:
			// The session ends; a new one takes its name's place.
			r.CloseSession(s)
			letter := s[:1]
			generation[letter]++
			name := fmt.Sprintf("%s%d", letter, generation[letter])
			r.Connect(name)
			for i := range sessions {
				if sessions[i] == s {
					sessions[i] = name
				}
			}
		case k < 3:
			r.AddAuth(s, "digest", "alice:pw")
		case k < 5 && watchy:
			// The connection drops and the session resumes with a random
			// setWatches2 (the recorder does not track which watches the
			// server held, so the lists are drawn like any paths).
			seen := r.LastZxid(s)
			r.Disconnect(s)
			r.Reconnect(s)
			r.Do(s, wire.OpSetWatches2, setWatches(seen, g.some(), g.some(), g.some(), g.some(), g.some()))
		case k < 3+profile.pipelines:
			n := 2 + g.rng.IntN(4)
			if profile.pipelines > 20 {
				n = 2 + g.rng.IntN(7)
			}
			reqs := make([]trace.SubOp, n)
			for i := range reqs {
				reqs[i] = g.request()
			}
			for _, l := range r.Pipeline(s, reqs...) {
				g.learn(l)
			}
		default:
			req := g.request()
			op, _ := trace.OpCode(req.Op)
			g.learn(r.Do(s, op, req.Req))
		}
	}
}
