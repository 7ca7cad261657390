package sim

import (
	"fmt"
	"strings"

	"github.com/zabd/zabd/sim/simclient"
	"github.com/zabd/zabd/zab"
)

// Bugs are the zab core's deliberate defects (zab.Bugs), switched on only to
// show that the simulator catches each of them (tests and `zabsim -bugs`).
type Bugs = zab.Bugs

// bugSwitches names every switch, in a fixed order, for flags and reports.
var bugSwitches = []struct {
	name string
	on   func(*Bugs) *bool
}{
	{"reply-before-fsync", func(b *Bugs) *bool { return &b.ReplyBeforeDurable }},
	{"watch-after-reply", func(b *Bugs) *bool { return &b.EventAfterReply }},
	{"expire-without-close-txn", func(b *Bugs) *bool { return &b.ExpireWithoutTxn }},
	{"read-overtakes-write", func(b *Bugs) *bool { return &b.ReadOvertakesWrite }},
	{"closing-survives-stepdown", func(b *Bugs) *bool { return &b.ClosingSurvivesStepDown }},
	{"diff-instead-of-trunc", func(b *Bugs) *bool { return &b.DiffInsteadOfTrunc }},
	{"epoch-not-persisted", func(b *Bugs) *bool { return &b.EpochNotPersisted }},
	{"ack-newleader-before-durable", func(b *Bugs) *bool { return &b.AckNewLeaderBeforeDurable }},
}

// BugNames lists the names ParseBugs accepts.
func BugNames() []string {
	names := make([]string, len(bugSwitches))
	for i, s := range bugSwitches {
		names[i] = s.name
	}
	return names
}

// ParseBugs reads a comma-separated list of bug names ("" is none).
func ParseBugs(list string) (Bugs, error) {
	var b Bugs
	if list == "" {
		return b, nil
	}
next:
	for _, name := range strings.Split(list, ",") {
		for _, s := range bugSwitches {
			if s.name == strings.TrimSpace(name) {
				*s.on(&b) = true
				continue next
			}
		}
		return b, fmt.Errorf("unknown bug %q (known: %s)", name, strings.Join(BugNames(), ", "))
	}
	return b, nil
}

// FormatBugs is the inverse of ParseBugs.
func FormatBugs(b Bugs) string {
	var on []string
	for _, s := range bugSwitches {
		if *s.on(&b) {
			on = append(on, s.name)
		}
	}
	return strings.Join(on, ",")
}

// recipeBugSwitches names the recipe mistakes (simclient.RecipeBugs) that
// ParseRecipeBugs switches on.
var recipeBugSwitches = []struct {
	name string
	on   func(*simclient.RecipeBugs) *bool
}{
	{"lock-no-watch", func(b *simclient.RecipeBugs) *bool { return &b.LockNoWatch }},
	{"election-no-sequence-check", func(b *simclient.RecipeBugs) *bool { return &b.ElectionNoSequenceCheck }},
}

// RecipeBugNames lists the names ParseRecipeBugs accepts.
func RecipeBugNames() []string {
	names := make([]string, len(recipeBugSwitches))
	for i, s := range recipeBugSwitches {
		names[i] = s.name
	}
	return names
}

// ParseRecipeBugs reads a comma-separated list of recipe bug names.
func ParseRecipeBugs(list string) (simclient.RecipeBugs, error) {
	var b simclient.RecipeBugs
	if list == "" {
		return b, nil
	}
next:
	for _, name := range strings.Split(list, ",") {
		for _, s := range recipeBugSwitches {
			if s.name == strings.TrimSpace(name) {
				*s.on(&b) = true
				continue next
			}
		}
		return b, fmt.Errorf("unknown recipe bug %q (known: %s)", name, strings.Join(RecipeBugNames(), ", "))
	}
	return b, nil
}
