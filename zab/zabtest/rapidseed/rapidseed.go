// Package rapidseed keeps the seeds at which a rapid property failed as
// regression cases: each runs with every go test, as the run that found it
// would replay it.
//
// rapid (pgregory.net/rapid v1.3) takes a seed only from its -rapid.seed
// flag, and its first check draws from that seed itself; so Check sets the
// flag (and -rapid.checks) for the one check and puts both back. Its own
// fail files (testdata/rapid/) are not kept: .gitignore leaves them out, and
// they hold the shrunk draws, which mean nothing to a reader.
//
// A seed names its sequence only while the property draws what it draws
// now: a change to a generator or to the order of draws sends the seed
// elsewhere, and the case silently tests something else. A property whose
// draws change must have its seeds found again (a long run) or its cases
// written out by hand.
package rapidseed

import (
	"flag"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// Check runs prop once at each seed, in a subtest named after the seed,
// exactly as
//
//	go test -run '<test>' -rapid.seed=<seed> -rapid.checks=1
//
// runs it; a failure shrinks and prints rapid's report, replay line
// included, as any rapid failure does.
func Check(t *testing.T, prop func(*rapid.T), seeds ...uint64) {
	t.Helper()
	for _, seed := range seeds {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			set(t, "rapid.seed", strconv.FormatUint(seed, 10))
			checks := "1"
			if testing.Short() {
				checks = "5" // rapid runs a fifth of its checks under -short
			}
			set(t, "rapid.checks", checks)
			rapid.Check(t, prop)
		})
	}
}

// set sets a command-line flag until t ends.
func set(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("rapidseed: rapid no longer registers -%s", name)
	}
	old := f.Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatalf("rapidseed: -%s=%s: %v", name, value, err)
	}
	t.Cleanup(func() {
		if err := flag.Set(name, old); err != nil {
			t.Errorf("rapidseed: putting back -%s=%s: %v", name, old, err)
		}
	})
}
