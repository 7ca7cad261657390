package simclient

import (
	"strconv"
	"strings"

	"github.com/zabd/zabd/wire"
)

// RecipeQueue is ZooKeeper's distributed queue (the recipes page's, kazoo's
// Queue): a producer adds an item as a persistent sequential node under
// /queue; a consumer lists the queue and takes the lowest item by deleting
// it — the one whose delete succeeds has it, a NoNode means another took it
// first, and the next is tried. Each queue client produces an item, then
// consumes one, again and again.
const RecipeQueue = "queue"

// QueuePath holds the queue's items.
const QueuePath = "/queue"

// ItemName is the prefix of the item a client's n-th production creates:
// it names the item even when the create's reply is lost (ZooKeeper
// appends the sequence number).
func ItemName(client, n int) string { return "c" + strconv.Itoa(client) + "p" + strconv.Itoa(n) + "-" }

type queue struct {
	client   int
	produced int // productions begun
	state    queueState
	items    []string // the last listing, in sequence order, not yet tried
}

type queueState int

const (
	queueSetup   queueState = iota // make /queue
	queueProduce                   // add an item
	queueList                      // list the items
	queueTake                      // delete the first item left in items
)

func (q *queue) next() (Op, bool) {
	switch q.state {
	case queueSetup:
		return Op{Name: "create", Code: wire.OpCreate, Path: QueuePath, Mode: wire.ModePersistent}, true
	case queueProduce:
		name := ItemName(q.client, q.produced)
		return Op{Name: "create", Code: wire.OpCreate, Path: QueuePath + "/" + name, Data: name, Mode: wire.ModePersistentSequential}, true
	case queueList:
		return Op{Name: "getChildren", Code: wire.OpGetChildren, Path: QueuePath}, true
	default: // queueTake
		return Op{Name: "delete", Code: wire.OpDelete, Path: QueuePath + "/" + q.items[0], Version: -1}, true
	}
}

func (q *queue) learn(op Op, res Result) {
	if op.Code == wire.OpCloseSession {
		return
	}
	switch q.state {
	case queueSetup:
		if res.Err == wire.ErrOK || res.Err == wire.ErrNodeExists {
			q.state = queueProduce
		}
	case queueProduce:
		// Produced, or perhaps (a lost reply): either way the next
		// production is another item.
		if res.Err == wire.ErrOK || res.Unknown {
			q.produced++
			q.state = queueList
		}
	case queueList:
		if res.Err == wire.ErrOK {
			q.items = sortBySequence(res.Children)
			q.state = queueTake
			if len(q.items) == 0 {
				q.state = queueProduce
			}
		}
	case queueTake:
		switch {
		case res.Err == wire.ErrOK:
			q.items, q.state = nil, queueProduce // taken
		case res.Err == wire.ErrNoNode:
			q.items = q.items[1:] // another consumer took it: the next
			if len(q.items) == 0 {
				q.state = queueList
			}
		case res.Unknown:
			q.state = queueList // taken or not: look again
		}
	}
}

func (q *queue) notice(wire.EventType, wire.KeeperState, string) {}

func (q *queue) stop() {}

// pauses: a queue client thinks before each production.
func (q *queue) pauses() bool { return q.state == queueProduce }

func (q *queue) finished() bool { return false }

// ItemOf is the production prefix of an item's node name, or "" for a
// name that is no item.
func ItemOf(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || !strings.Contains(name[:i], "p") {
		return ""
	}
	return name[:i+1]
}
