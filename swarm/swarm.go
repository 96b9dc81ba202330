// Package swarm is the BitTorrent-style broadcast of seed 000 Ch. 4: the
// root seeds a message cut into fragments, every peer requests the
// fragments it lacks from peers that have them (rarest first, random among
// equals), over a bounded number of upload slots and a bounded random peer
// set. Data flows preferably over fast paths, so the fragments a peer
// receives from each other peer (counted here) measure the achievable
// bandwidth between them (Eq. 4.1); package probe repeats the broadcast and
// aggregates the counts (Eq. 4.2), package coll offers it as a broadcast.
//
// The protocol runs on comm.Comm only, one event loop per rank, as a
// BitTorrent client is one loop over a socket per peer: a single receive
// of control messages from any source is always posted, and a fragment is
// received from its uploader alone, into a receive posted when the
// uploader announces it (a control message that precedes it on the pair's
// stream). A slow fragment, across a bottleneck, so never holds up the
// loop: its receive completes while the loop answers other peers, and the
// next control message from that uploader, which the pair's order puts
// after the fragment, finds it complete. Fragments are exactly
// Params.Fragment bytes long (the last one is padded).
//
// Tags: comm.SystemTag(300) .. comm.SystemTag(309).
package swarm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"netaware/comm"
)

var (
	tagSwarm = comm.SystemTag(300) // control messages
	tagFrag  = comm.SystemTag(301) // fragments
)

// Defaults of seed 000 Sect. 4.4 and 4.6: 16 KiB fragments, 5 upload
// slots (the chapter's client), a peer set of 35.
const (
	DefaultFragment    = 16 << 10
	DefaultConnections = 5
	DefaultPeerSet     = 35
	DefaultPipeline    = 5
	DefaultHaveBatch   = 8
	// DefaultChokeInterval is BitTorrent's rechoke period.
	DefaultChokeInterval = 10 * time.Second
	minFragment          = 64
)

// Params of one swarm broadcast. The zero value of a field takes its
// default.
type Params struct {
	// Fragment is the fragment size in bytes.
	Fragment int `json:"fragment_bytes"`
	// Connections is the number of upload slots of every peer (peers
	// unchoked at a time); it bounds the active connections.
	Connections int `json:"connections"`
	// PeerSet bounds the peers a rank knows (its neighbours).
	PeerSet int `json:"peer_set"`
	// Pipeline is the number of requests a downloader keeps outstanding
	// with one uploader (with Adaptive, the least number).
	Pipeline int `json:"pipeline"`
	// Adaptive sizes every connection's request pipeline to twice the
	// fragments it carries per round trip where that exceeds Pipeline
	// (its bandwidth-delay product, as BitTorrent clients size their
	// request queues by the measured rate), so that a connection over a
	// long round trip is bound by its bandwidth, not its latency. Off by
	// default: on a loaded machine the round trip of kernel TCP includes
	// the scheduling delay of the ranks, pipelines grow on fast links and
	// slow ones alike, and one connection carries the whole message.
	Adaptive bool `json:"adaptive_pipeline,omitempty"`
	// HaveBatch is how many new fragments a peer collects before it
	// announces them to its neighbours (0: a sixteenth of the message, at
	// least DefaultHaveBatch).
	HaveBatch int `json:"have_batch"`
	// Choke turns on tit-for-tat: every ChokeInterval an uploader keeps
	// unchoked the Connections-1 interested peers that uploaded most to
	// it (a complete peer: that downloaded most from it) and one random
	// peer (optimistic unchoke). Off, an uploader keeps a peer unchoked
	// until it is no longer interested, which seed 000 Sect. 4.8.1 finds
	// better for the measurement.
	Choke         bool          `json:"choke,omitempty"`
	ChokeInterval time.Duration `json:"choke_interval_ns,omitempty"`
	// Seed draws the peer sets and every random choice; Round is mixed in
	// so that successive broadcasts differ.
	Seed  uint64 `json:"seed"`
	Round uint64 `json:"-"`
}

// WithDefaults fills zero fields with the defaults.
func (p Params) WithDefaults() Params {
	if p.Fragment == 0 {
		p.Fragment = DefaultFragment
	}
	if p.Connections == 0 {
		p.Connections = DefaultConnections
	}
	if p.PeerSet == 0 {
		p.PeerSet = DefaultPeerSet
	}
	if p.Pipeline == 0 {
		p.Pipeline = DefaultPipeline
	}
	if p.ChokeInterval == 0 {
		p.ChokeInterval = DefaultChokeInterval
	}
	return p
}

// Validate checks the parameters (after WithDefaults).
func (p Params) Validate() error {
	switch {
	case p.Fragment < minFragment:
		return fmt.Errorf("swarm: fragment %d bytes, want >= %d", p.Fragment, minFragment)
	case p.Connections < 1:
		return fmt.Errorf("swarm: connections %d, want >= 1", p.Connections)
	case p.PeerSet < 1:
		return fmt.Errorf("swarm: peer set %d, want >= 1", p.PeerSet)
	case p.Pipeline < 1:
		return fmt.Errorf("swarm: pipeline %d, want >= 1", p.Pipeline)
	case p.HaveBatch < 0:
		return fmt.Errorf("swarm: have batch %d, want >= 0 (0: automatic)", p.HaveBatch)
	case p.ChokeInterval < 0:
		return fmt.Errorf("swarm: choke interval %v, want > 0", p.ChokeInterval)
	}
	return nil
}

// Count is how many fragments a rank received from one peer.
type Count struct {
	From      int `json:"from"`
	Fragments int `json:"fragments"`
	// Busy is how long this rank had requests outstanding with the peer;
	// Stalled the part of it spent on the StalledFragments that did not
	// follow the previous fragment back to back (the first of a busy
	// period, and those requested less than a round trip before the
	// previous one arrived): a round trip, not the link, set their time.
	// (Fragments-StalledFragments) over (Busy-Stalled) is the
	// connection's rate while its pipeline was full, which latency does
	// not lower.
	Busy             time.Duration `json:"busy_ns"`
	Stalled          time.Duration `json:"stalled_ns,omitempty"`
	StalledFragments int           `json:"stalled_fragments,omitempty"`
}

// Stats is one rank's view of a broadcast.
type Stats struct {
	// Received lists the peers this rank received fragments from, by rank.
	Received []Count
	// Complete is when this rank held the whole message, from the start
	// of the broadcast (0 on the root); Done when it left the protocol.
	Complete, Done time.Duration
	// Sent is the number of fragments this rank uploaded; Rejected the
	// requests it refused (choked peers).
	Sent, Rejected int
}

// Broadcast sends root's buf to every rank of c. Every rank calls it with
// the same root, parameters and buffer length; on return every rank's buf
// holds the root's bytes.
func Broadcast(ctx context.Context, c comm.Comm, root int, buf []byte, p Params) (*Stats, error) {
	return run(ctx, c, root, len(buf), buf, p)
}

// Measure is Broadcast of m bytes whose content does not matter (seed
// 000's dummy data): no rank holds a buffer of m bytes, so that hundreds
// of simulated ranks broadcast gigabytes.
func Measure(ctx context.Context, c comm.Comm, root, m int, p Params) (*Stats, error) {
	return run(ctx, c, root, m, nil, p)
}

// Control messages: a type byte, three zero bytes, then little-endian
// uint32 arguments. They are never Fragment bytes long.
const (
	msgInterested byte = iota + 1
	msgNotInterested
	msgUnchoke
	msgChoke
	msgRequest
	msgReject
	msgHave
	msgComplete
	msgBye
	// msgPiece announces the fragment that follows it on the pair's
	// stream; msgSent ends the answer to a request, so that the
	// downloader takes its last fragment without waiting for more.
	msgPiece
	msgSent
)

type neighbour struct {
	rank     int
	has      []uint64
	complete bool
	useful   int // fragments it has that this rank lacks and has not requested

	// this rank downloading from it
	interestedIn bool // told it "interested"
	unchokedMe   bool
	outstanding  []int32         // requested fragments, in request order
	askedAt      []time.Duration // when each was requested
	since        time.Duration   // when outstanding became non-empty
	busy         time.Duration
	recv         comm.Request // the announced fragment's receive
	recvBuf      []byte
	recvFrag     int
	inPlace      bool          // recvBuf is the fragment's place in the message
	rtt          time.Duration // least request-to-arrival time seen
	grown        int           // Adaptive: the window's bound, one more per fragment received (slow start)
	lastArrival  time.Duration
	stalled      time.Duration
	stalledFrags int

	// this rank uploading to it
	interested bool
	unchoked   bool
	up, down   int // fragments sent to / received from it this choke period

	byeSent, byeRecv bool
}

type peer struct {
	ctx  context.Context
	c    comm.Comm
	p    Params
	rng  *rand.Rand
	m    int
	n    int // fragments
	buf  []byte
	zero []byte

	have      []bool
	haveCount int

	// finishers counts the neighbours that completed their download,
	// downloaders those that had one to do (the root's neighbours but it).
	finishers, downloaders int

	requested []bool
	avail     []int32 // neighbours holding each fragment
	nbs       []*neighbour
	slot      map[int]int // rank -> index into nbs
	unchoked  int
	pending   []int32  // fragments not yet announced
	pool      [][]byte // receive buffers of Measure
	dirty     []bool   // per neighbour: interest to update
	dirtyList []int
	received  []int // per neighbour index

	sends []sendReq
	start time.Duration
	stats Stats
	next  time.Duration // next rechoke
}

type sendReq struct {
	r comm.Request
}

func run(ctx context.Context, c comm.Comm, root, m int, buf []byte, p Params) (*Stats, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n, me := c.Size(), c.Rank()
	if root < 0 || root >= n {
		return nil, fmt.Errorf("swarm: root %d out of range [0,%d)", root, n)
	}
	if m < 0 {
		return nil, fmt.Errorf("swarm: message of %d bytes", m)
	}
	st := &Stats{}
	if n == 1 || m == 0 {
		return st, nil
	}
	pr := &peer{ctx: ctx, c: c, p: p, m: m, buf: buf, start: c.Now()}
	pr.n = (m + p.Fragment - 1) / p.Fragment
	pr.rng = rand.New(rand.NewPCG(p.Seed^uint64(me)*0x9e3779b97f4a7c15, p.Round+1))
	pr.have = make([]bool, pr.n)
	pr.requested = make([]bool, pr.n)
	pr.avail = make([]int32, pr.n)
	pr.slot = map[int]int{}
	if buf == nil {
		pr.zero = comm.Zeros(p.Fragment)
	}
	words := (pr.n + 63) / 64
	for _, r := range sharedPeerSets(n, p.PeerSet, p.Seed^(p.Round*0xbf58476d1ce4e5b9)^uint64(root))[me] {
		nb := &neighbour{rank: r, has: make([]uint64, words), grown: p.Pipeline}
		pr.slot[r] = len(pr.nbs)
		pr.nbs = append(pr.nbs, nb)
	}
	pr.received = make([]int, len(pr.nbs))
	pr.dirty = make([]bool, len(pr.nbs))
	pr.next = pr.start + p.ChokeInterval
	if err := pr.loop(root); err != nil {
		return nil, err
	}
	pr.stats.Done = c.Now() - pr.start
	for i, k := range pr.received {
		if k > 0 {
			nb := pr.nbs[i]
			pr.stats.Received = append(pr.stats.Received, Count{From: nb.rank, Fragments: k, Busy: nb.busy, Stalled: nb.stalled, StalledFragments: nb.stalledFrags})
		}
	}
	return &pr.stats, nil
}

var peerCache struct {
	sync.Mutex
	key  [3]uint64
	sets [][]int
}

// sharedPeerSets is PeerSets computed once per process for all the ranks
// of a simulated or local world (they all ask for the same graph).
func sharedPeerSets(n, degree int, seed uint64) [][]int {
	peerCache.Lock()
	defer peerCache.Unlock()
	key := [3]uint64{uint64(n), uint64(degree), seed}
	if peerCache.sets == nil || peerCache.key != key {
		peerCache.key, peerCache.sets = key, PeerSets(n, degree, seed)
	}
	return peerCache.sets
}

func (pr *peer) loop(root int) error {
	me := pr.c.Rank()
	if me == root {
		for i := range pr.have {
			pr.have[i] = true
		}
		pr.haveCount = pr.n
	}
	pr.downloaders = len(pr.nbs)
	if rs, ok := pr.slot[root]; ok && me != root {
		pr.markComplete(rs)
		pr.downloaders--
	}
	if pr.haveCount == pr.n {
		// The root: every neighbour is a downloader; it waits for their
		// interest.
	} else {
		for i := range pr.nbs {
			pr.updateInterest(i)
		}
	}
	rbuf := make([]byte, pr.ctlMax())
	for !pr.finished() {
		st, err := pr.c.Recv(pr.ctx, comm.AnySource, tagSwarm, rbuf)
		if err != nil {
			return fmt.Errorf("swarm: rank %d: %w", me, err)
		}
		j, ok := pr.slot[st.Source]
		if !ok {
			return fmt.Errorf("swarm: rank %d: message from rank %d, not a peer", me, st.Source)
		}
		// The pair's order puts an announced fragment before this
		// message: take it first.
		err = pr.takeFragment(j)
		if err == nil {
			err = pr.onControl(j, rbuf[:st.Count])
		}
		if err != nil {
			return fmt.Errorf("swarm: rank %d, from rank %d: %w", me, st.Source, err)
		}
		pr.settle()
		if pr.p.Choke && pr.c.Now() >= pr.next {
			if err := pr.rechoke(); err != nil {
				return err
			}
		}
		pr.reap(false)
	}
	return pr.reap(true)
}

func (pr *peer) finished() bool {
	if pr.haveCount < pr.n {
		return false
	}
	for _, nb := range pr.nbs {
		if !nb.byeSent || !nb.byeRecv {
			return false
		}
	}
	return true
}

// reap drops the sends that have completed; with all it waits for every
// one. A bounded backlog keeps the memory of a rank bounded.
func (pr *peer) reap(all bool) error {
	k := 0
	for k < len(pr.sends) {
		if all || len(pr.sends)-k > 1024 {
			if _, err := pr.sends[k].r.Wait(pr.ctx); err != nil {
				return err
			}
			k++
			continue
		}
		done, _, err := pr.sends[k].r.Test()
		if err != nil {
			return err
		}
		if !done {
			break
		}
		k++
	}
	pr.sends = append(pr.sends[:0], pr.sends[k:]...)
	return nil
}

func (pr *peer) send(j int, b []byte) { pr.sendTag(j, tagSwarm, b) }

func (pr *peer) sendTag(j, tag int, b []byte) {
	pr.sends = append(pr.sends, sendReq{pr.c.Isend(pr.nbs[j].rank, tag, b)})
}

func (pr *peer) ctl(j int, typ byte, args ...int32) {
	b := make([]byte, 4+4*len(args))
	b[0] = typ
	for i, a := range args {
		binary.LittleEndian.PutUint32(b[4+4*i:], uint32(a))
	}
	pr.send(j, b)
}

func (nb *neighbour) hasPiece(i int) bool { return nb.has[i/64]&(1<<(i%64)) != 0 }

// setHas records that neighbour j holds fragment i.
func (pr *peer) setHas(j, i int) {
	nb := pr.nbs[j]
	if nb.hasPiece(i) {
		return
	}
	nb.has[i/64] |= 1 << (i % 64)
	pr.avail[i]++
	if !pr.have[i] && !pr.requested[i] {
		nb.useful++
		pr.touch(j)
	}
}

// setRequested marks fragment i requested (or, rejected, free again): the
// neighbours holding it gain or lose a fragment worth asking for.
func (pr *peer) setRequested(i int, v bool) {
	pr.requested[i] = v
	for k, o := range pr.nbs {
		if o.hasPiece(i) {
			if v {
				o.useful--
			} else {
				o.useful++
			}
			pr.touch(k)
		}
	}
}

// touch queues neighbour k's interest for an update once the current
// message is handled, so that a request goes out before the "not
// interested" that it may cause.
func (pr *peer) touch(k int) {
	if !pr.dirty[k] {
		pr.dirty[k] = true
		pr.dirtyList = append(pr.dirtyList, k)
	}
}

// settle updates the interest of the neighbours touched.
func (pr *peer) settle() {
	for _, k := range pr.dirtyList {
		pr.dirty[k] = false
		pr.updateInterest(k)
	}
	pr.dirtyList = pr.dirtyList[:0]
}

func (pr *peer) markComplete(j int) {
	for i := 0; i < pr.n; i++ {
		pr.setHas(j, i)
	}
	pr.nbs[j].complete = true
}

// updateInterest tells neighbour j whether this rank wants fragments from
// it, when that changed.
func (pr *peer) updateInterest(j int) {
	nb := pr.nbs[j]
	want := pr.haveCount < pr.n && nb.useful > 0
	if want == nb.interestedIn {
		return
	}
	nb.interestedIn = want
	if want {
		pr.ctl(j, msgInterested)
	} else if pr.haveCount < pr.n {
		// A complete rank said so with msgComplete.
		pr.ctl(j, msgNotInterested)
	}
}

// fill keeps up to window(j) requests outstanding with neighbour j while
// it has fragments this rank still needs: the rarest among its neighbours
// first, random among equally rare ones. It tops the pipeline up only once
// half of it has arrived, in one message, so that a request costs a
// fraction of a message per fragment.
func (pr *peer) fill(j int) {
	nb := pr.nbs[j]
	win := pr.window(j)
	if !nb.unchokedMe || pr.haveCount == pr.n || len(nb.outstanding) > win/2 {
		return
	}
	var ask []int32
	now := pr.c.Now()
	for len(nb.outstanding) < win {
		best, seen := -1, 0
		var rarest int32
		for w, word := range nb.has {
			for word != 0 {
				b := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if b >= pr.n || pr.have[b] || pr.requested[b] {
					continue
				}
				switch a := pr.avail[b]; {
				case best < 0 || a < rarest:
					best, rarest, seen = b, a, 1
				case a == rarest:
					seen++
					if pr.rng.IntN(seen) == 0 {
						best = b
					}
				}
			}
		}
		if best < 0 {
			break
		}
		pr.setRequested(best, true)
		if len(nb.outstanding) == 0 {
			nb.since = now
		}
		nb.outstanding = append(nb.outstanding, int32(best))
		nb.askedAt = append(nb.askedAt, now)
		ask = append(ask, int32(best))
	}
	if len(ask) > 0 {
		pr.ctl(j, msgRequest, ask...)
	}
}

var errProtocol = errors.New("protocol violation")

// onFragment takes fragment i from neighbour j, the next one it was asked
// for.
func (pr *peer) onFragment(j, i int, data []byte, inPlace bool) error {
	nb := pr.nbs[j]
	if len(nb.outstanding) == 0 || int(nb.outstanding[0]) != i {
		return fmt.Errorf("%w: fragment %d not requested next", errProtocol, i)
	}
	now := pr.c.Now()
	asked := nb.askedAt[0]
	nb.outstanding, nb.askedAt = nb.outstanding[1:], nb.askedAt[1:]
	if len(nb.outstanding) == 0 {
		nb.busy += now - nb.since
	}
	if d := now - asked; nb.rtt == 0 || d < nb.rtt {
		nb.rtt = d
	}
	// A round trip, not the link, set the time of the first fragment of a
	// busy period and of a fragment requested too late to follow the
	// previous one back to back (less than a round trip before that one
	// arrived): they and their waiting are left out of the rate.
	//
	// With Adaptive, so are the fragments of the end game, once a quarter
	// of this rank's downloading peers are complete: the swarm unloads the
	// network, and a connection's rate is that of idle links, not the
	// bandwidth under sharing the rate stands for. The ranks that finish
	// last are those far from everyone (dichev-n2's R1, 40 ms from the
	// rest), whose connections to the far side of the bottlenecks came
	// out as fast as within a switch. Eq. 4.2's fragment counts give the
	// few fragments of the end game little weight; a rate gives them as
	// much as any.
	switch {
	case pr.p.Adaptive && pr.downloaders > 0 && 4*pr.finishers >= pr.downloaders:
		nb.stalled += now - max(nb.since, nb.lastArrival)
		nb.stalledFrags++
	case nb.lastArrival < nb.since || nb.lastArrival == 0:
		nb.stalled += now - max(asked, nb.since)
		nb.stalledFrags++
	case asked+nb.rtt > nb.lastArrival:
		nb.stalled += now - nb.lastArrival
		nb.stalledFrags++
	}
	nb.lastArrival = now
	if pr.have[i] {
		return fmt.Errorf("%w: fragment %d twice", errProtocol, i)
	}
	if pr.buf != nil && !inPlace {
		copy(pr.buf[i*pr.p.Fragment:], data)
	}
	pr.have[i] = true
	pr.haveCount++
	pr.received[j]++
	nb.down++
	nb.grown++
	if pr.haveCount == pr.n {
		pr.stats.Complete = pr.c.Now() - pr.start
		pr.pending = pr.pending[:0]
		for k, o := range pr.nbs {
			if !o.byeRecv {
				pr.ctl(k, msgComplete)
			}
			pr.updateInterest(k)
			pr.maybeBye(k)
		}
		return nil
	}
	pr.pending = append(pr.pending, int32(i))
	if len(pr.pending) >= pr.haveBatch() {
		for k, o := range pr.nbs {
			if !o.complete {
				pr.ctl(k, msgHave, pr.pending...)
			}
		}
		pr.pending = pr.pending[:0]
	}
	pr.fill(j)
	return nil
}

// haveBatch is how many fragments an announcement carries: Params.HaveBatch,
// or by default a sixteenth of the message (at least DefaultHaveBatch), so
// that a peer sends about 16 announcements per neighbour whatever the
// message size; always shorter than a fragment.
func (pr *peer) haveBatch() int {
	b := pr.p.HaveBatch
	if b == 0 {
		b = max(DefaultHaveBatch, (pr.n+15)/16)
	}
	return min(b, (pr.p.Fragment-4)/4-1)
}

// ctlMax bounds a control message: a request or an announcement of at
// most maxAsk fragments.
func (pr *peer) ctlMax() int { return 4 + 4*max(pr.maxAsk(), pr.haveBatch(), 1) }

// maxAsk bounds the requests outstanding with one uploader: every
// fragment, and a request shorter than a fragment.
func (pr *peer) maxAsk() int { return max(1, min(pr.n, (pr.p.Fragment-4)/4-1)) }

// window is how many requests to keep outstanding with neighbour j:
// Pipeline, or twice the fragments the connection carries per round trip
// where that is more. With the requests of one round trip in flight a
// connection is limited by its bandwidth; the factor two lets the window
// double per round trip until it is, since a rate measured with a window
// too small is the window's, not the network's. As in TCP's slow start the
// window grows by at most one request per fragment received (it doubles
// per round trip): a rate estimated from the first fragment or two times a
// long round trip asked for the whole message at once, the downloader's
// first uploaders took every fragment, and its later connections carried
// one request each, measured in a millisecond (dichev-n2's R1 hosts came
// out fast to every router, docs/swarm.md).
func (pr *peer) window(j int) int {
	nb := pr.nbs[j]
	w := pr.p.Pipeline
	if !pr.p.Adaptive {
		return min(w, pr.maxAsk())
	}
	busy := nb.busy
	if len(nb.outstanding) > 0 {
		busy += pr.c.Now() - nb.since
	}
	if k := pr.received[j] - nb.stalledFrags; k > 0 && nb.rtt > 0 && busy > nb.stalled {
		bdp := float64(k) / (busy - nb.stalled).Seconds() * nb.rtt.Seconds()
		w = max(w, min(int(math.Ceil(2*bdp)), nb.grown))
	}
	return min(w, pr.maxAsk())
}

// takeFragment completes the receive of neighbour j's announced fragment,
// if any.
func (pr *peer) takeFragment(j int) error {
	nb := pr.nbs[j]
	if nb.recv == nil {
		return nil
	}
	st, err := nb.recv.Wait(pr.ctx)
	nb.recv = nil
	if err != nil {
		return err
	}
	if st.Count != pr.p.Fragment {
		return fmt.Errorf("%w: fragment of %d bytes, want %d", errProtocol, st.Count, pr.p.Fragment)
	}
	err = pr.onFragment(j, nb.recvFrag, nb.recvBuf, nb.inPlace)
	if !nb.inPlace {
		pr.pool = append(pr.pool, nb.recvBuf)
	}
	nb.recvBuf = nil
	return err
}

// postFragment posts the receive of fragment i, which neighbour j
// announced: into the message buffer where the fragment fits whole,
// otherwise into a buffer of the pool.
func (pr *peer) postFragment(j, i int) {
	nb := pr.nbs[j]
	lo := i * pr.p.Fragment
	var b []byte
	nb.inPlace = pr.buf != nil && lo+pr.p.Fragment <= len(pr.buf)
	if nb.inPlace {
		b = pr.buf[lo : lo+pr.p.Fragment]
	} else if k := len(pr.pool); k > 0 {
		b, pr.pool = pr.pool[k-1], pr.pool[:k-1]
	} else {
		b = make([]byte, pr.p.Fragment)
	}
	nb.recvBuf, nb.recvFrag = b, i
	nb.recv = pr.c.Irecv(nb.rank, tagFrag, b)
}

func b32(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func (pr *peer) maybeBye(j int) {
	nb := pr.nbs[j]
	if pr.haveCount == pr.n && nb.complete && !nb.byeSent {
		nb.byeSent = true
		pr.ctl(j, msgBye)
	}
}

func (pr *peer) onControl(j int, b []byte) error {
	if len(b) < 4 || (len(b)-4)%4 != 0 {
		return fmt.Errorf("%w: control message of %d bytes", errProtocol, len(b))
	}
	nb := pr.nbs[j]
	args := make([]int, (len(b)-4)/4)
	for k := range args {
		args[k] = int(binary.LittleEndian.Uint32(b[4+4*k:]))
		if args[k] >= pr.n {
			return fmt.Errorf("%w: fragment %d of %d", errProtocol, args[k], pr.n)
		}
	}
	switch b[0] {
	case msgInterested:
		nb.interested = true
		if !nb.unchoked && pr.unchoked < pr.p.Connections {
			pr.unchoke(j)
		}
	case msgNotInterested:
		nb.interested = false
		if nb.unchoked {
			pr.choke(j, true)
			pr.fillSlots()
		}
	case msgUnchoke:
		nb.unchokedMe = true
		pr.fill(j)
	case msgChoke:
		nb.unchokedMe = false
	case msgRequest:
		// A request is answered as a whole, in order: every fragment, or
		// one rejection of them all (a choked peer).
		if len(args) == 0 {
			return fmt.Errorf("%w: empty request", errProtocol)
		}
		ok := nb.unchoked
		for _, i := range args {
			ok = ok && pr.have[i]
		}
		if !ok {
			pr.stats.Rejected += len(args)
			pr.ctl(j, msgReject, b32(args)...)
			return nil
		}
		for _, i := range args {
			frag := pr.zero
			if pr.buf != nil {
				lo := i * pr.p.Fragment
				if lo+pr.p.Fragment <= len(pr.buf) {
					frag = pr.buf[lo : lo+pr.p.Fragment]
				} else {
					frag = make([]byte, pr.p.Fragment)
					copy(frag, pr.buf[lo:])
				}
			}
			pr.stats.Sent++
			nb.up++
			pr.ctl(j, msgPiece, int32(i))
			pr.sendTag(j, tagFrag, frag)
		}
		pr.ctl(j, msgSent)
	case msgReject:
		for _, i := range args {
			if len(nb.outstanding) == 0 || int(nb.outstanding[0]) != i {
				return fmt.Errorf("%w: reject of fragment %d not requested next", errProtocol, i)
			}
			nb.outstanding, nb.askedAt = nb.outstanding[1:], nb.askedAt[1:]
			pr.setRequested(i, false)
		}
		if len(nb.outstanding) == 0 {
			nb.busy += pr.c.Now() - nb.since
		}
		for k := range pr.nbs {
			pr.fill(k)
		}
	case msgHave:
		for _, i := range args {
			pr.setHas(j, i)
		}
		pr.fill(j)
	case msgComplete:
		if !nb.complete {
			pr.finishers++
		}
		pr.markComplete(j)
		nb.interested = false
		if nb.unchoked {
			pr.choke(j, false)
			pr.fillSlots()
		}
		pr.fill(j)
		pr.maybeBye(j)
	case msgPiece:
		if len(args) != 1 {
			return fmt.Errorf("%w: piece announcement of %d fragments", errProtocol, len(args))
		}
		if len(nb.outstanding) == 0 || int(nb.outstanding[0]) != args[0] {
			return fmt.Errorf("%w: fragment %d announced, not requested next", errProtocol, args[0])
		}
		pr.postFragment(j, args[0])
	case msgSent:
		// takeFragment took the last fragment of the answer.
	case msgBye:
		if nb.byeRecv {
			return fmt.Errorf("%w: bye twice", errProtocol)
		}
		nb.byeRecv = true
	default:
		return fmt.Errorf("%w: control message type %d", errProtocol, b[0])
	}
	return nil
}

func (pr *peer) unchoke(j int) {
	nb := pr.nbs[j]
	nb.unchoked = true
	pr.unchoked++
	pr.ctl(j, msgUnchoke)
}

// choke frees neighbour j's upload slot; tell is false when j no longer
// listens (it is complete).
func (pr *peer) choke(j int, tell bool) {
	nb := pr.nbs[j]
	nb.unchoked = false
	pr.unchoked--
	if tell {
		pr.ctl(j, msgChoke)
	}
}

// fillSlots unchokes random interested neighbours while slots are free.
func (pr *peer) fillSlots() {
	for pr.unchoked < pr.p.Connections {
		var cand []int
		for k, o := range pr.nbs {
			if o.interested && !o.unchoked && !o.complete {
				cand = append(cand, k)
			}
		}
		if len(cand) == 0 {
			return
		}
		pr.unchoke(cand[pr.rng.IntN(len(cand))])
	}
}

// rechoke is tit-for-tat (Params.Choke): keep the Connections-1 interested
// neighbours that gave most this period (a complete peer: that took most)
// and one optimistic random one.
func (pr *peer) rechoke() error {
	pr.next = pr.c.Now() + pr.p.ChokeInterval
	var cand []int
	for k, o := range pr.nbs {
		if o.interested && !o.complete {
			cand = append(cand, k)
		}
	}
	seed := pr.haveCount == pr.n
	pr.rng.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
	sort.SliceStable(cand, func(a, b int) bool {
		x, y := pr.nbs[cand[a]], pr.nbs[cand[b]]
		if seed {
			return x.up > y.up
		}
		return x.down > y.down
	})
	keep := map[int]bool{}
	for _, k := range cand[:min(len(cand), pr.p.Connections-1)] {
		keep[k] = true
	}
	if rest := cand[min(len(cand), pr.p.Connections-1):]; len(rest) > 0 {
		keep[rest[pr.rng.IntN(len(rest))]] = true
	}
	for k, o := range pr.nbs {
		switch {
		case o.unchoked && !keep[k]:
			pr.choke(k, true)
		case !o.unchoked && keep[k]:
			pr.unchoke(k)
		}
		o.up, o.down = 0, 0
	}
	return nil
}
