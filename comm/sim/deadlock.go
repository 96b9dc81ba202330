package sim

import (
	"fmt"
	"strings"
	"time"

	"netaware/comm"
)

// BlockedCall is one rank's pending call when the simulation deadlocked.
type BlockedCall struct {
	Rank  int
	Op    string // Send, Ssend, Recv, Spin
	Peer  int    // destination or source (comm.AnySource), world rank
	Tag   int
	Since time.Duration // virtual time the call was made
}

func (b BlockedCall) String() string {
	peer := fmt.Sprint(b.Peer)
	if b.Op == "Recv" && b.Peer == comm.AnySource {
		peer = "any"
	}
	tag := fmt.Sprint(b.Tag)
	if b.Op == "Recv" && b.Tag == comm.AnyTag {
		tag = "any"
	}
	dir := "to"
	if b.Op == "Recv" {
		dir = "from"
	}
	return fmt.Sprintf("rank %d: %s %s %s, tag %s, since %v", b.Rank, b.Op, dir, peer, tag, b.Since)
}

// DeadlockError reports that every unfinished rank was blocked with nothing
// in flight that could wake one of them.
type DeadlockError struct {
	Time    time.Duration
	Blocked []BlockedCall
	Done    int // ranks that had returned
}

func (e *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sim: deadlock at virtual time %v: %d rank(s) blocked, %d returned", e.Time, len(e.Blocked), e.Done)
	for i, c := range e.Blocked {
		if i == 32 {
			fmt.Fprintf(&b, "; ... %d more", len(e.Blocked)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(c.String())
	}
	return b.String()
}

func (k *kernel) deadlockReport() *DeadlockError {
	e := &DeadlockError{Time: seconds(k.now)}
	for _, r := range k.ranks {
		if r.done {
			e.Done++
			continue
		}
		c := BlockedCall{Rank: r.id, Op: "Spin", Peer: -1}
		if q := r.waiting; q != nil {
			c = BlockedCall{Rank: r.id, Op: q.op.String(), Peer: q.peer, Tag: q.tag, Since: seconds(q.since)}
		}
		e.Blocked = append(e.Blocked, c)
	}
	return e
}
