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
var bugSwitches = []bugSwitch[Bugs]{
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
func BugNames() []string { return switchNames(bugSwitches) }

// ParseBugs reads a comma-separated list of bug names ("" is none).
func ParseBugs(list string) (Bugs, error) { return parseSwitches(list, bugSwitches, "bug") }

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
var recipeBugSwitches = []bugSwitch[simclient.RecipeBugs]{
	{"lock-no-watch", func(b *simclient.RecipeBugs) *bool { return &b.LockNoWatch }},
	{"election-no-sequence-check", func(b *simclient.RecipeBugs) *bool { return &b.ElectionNoSequenceCheck }},
}

// RecipeBugNames lists the names ParseRecipeBugs accepts.
func RecipeBugNames() []string { return switchNames(recipeBugSwitches) }

// ParseRecipeBugs reads a comma-separated list of recipe bug names.
func ParseRecipeBugs(list string) (simclient.RecipeBugs, error) {
	return parseSwitches(list, recipeBugSwitches, "recipe bug")
}

// bugSwitch names one deliberate defect of a set T of them.
type bugSwitch[T any] struct {
	name string
	on   func(*T) *bool
}

func switchNames[T any](switches []bugSwitch[T]) []string {
	names := make([]string, len(switches))
	for i, s := range switches {
		names[i] = s.name
	}
	return names
}

// parseSwitches switches on the defects a comma-separated list names
// ("" is none); what says what they are, for the error.
func parseSwitches[T any](list string, switches []bugSwitch[T], what string) (T, error) {
	var b T
	if list == "" {
		return b, nil
	}
next:
	for _, name := range strings.Split(list, ",") {
		for _, s := range switches {
			if s.name == strings.TrimSpace(name) {
				*s.on(&b) = true
				continue next
			}
		}
		return b, fmt.Errorf("unknown %s %q (known: %s)", what, name, strings.Join(switchNames(switches), ", "))
	}
	return b, nil
}
