// Package probe is netaware's measurement suite: the pair scheduler of
// LGate (seed 003, Sect. 3.1.1), Shirai's ping-pong RTT (seed 002, Fig. 6),
// the PLogP micro-benchmark (seed 003, Sect. 3.1.2), Hockney fits, bulk
// bandwidth, concurrent communication patterns (seed 001, Sect. 3.1, 7.1),
// swarm tomography (seed 000 Ch. 4) and rank identities; they fill the
// dataset.json format of package dataset.
//
// Everything is written against comm.Comm only, SPMD style: every rank of
// the communicator calls the same function with the same arguments, and the
// code decides from the rank what to do. It therefore runs unchanged in the
// simulator (virtual time), over TCP and in-process. Time comes from
// comm.Comm.Now; the package never reads the wall clock.
//
// Two layers: pair measurements usable on demand inside any SPMD program
// (RTTInitiate / RTTRespond / RTTServe; PLogPPair, HockneyPair and
// BandwidthPair against PLogPServe on the peer), and campaigns that run one
// of them on every pair of a plan (SerialPlan, HierarchicalPlan, FastTree,
// RepresentativePlan; RunCampaign, Campaign.Run) and collect the results in
// a Dataset on rank 0, with checkpoint and progress callbacks.
//
// Protocol tags are comm.SystemTag(100) .. comm.SystemTag(199).
package probe

import (
	"encoding/binary"

	"netaware/comm"
)

// Reserved tags of the probe protocols.
var (
	tagCtl      = comm.SystemTag(100) // sender -> receiver: next operation
	tagReady    = comm.SystemTag(101) // receiver -> sender: posted, go
	tagData     = comm.SystemTag(102) // measured payloads
	tagReply    = comm.SystemTag(103) // replies to measured payloads
	tagRTTCtl   = comm.SystemTag(110) // RTT: start / stop a responder
	tagRTTPing  = comm.SystemTag(111)
	tagRTTPong  = comm.SystemTag(112)
	tagResHdr   = comm.SystemTag(120) // campaign: result header to rank 0
	tagResBody  = comm.SystemTag(121)
	tagBcast    = comm.SystemTag(122) // campaign: done-set broadcast
	tagToken    = comm.SystemTag(123) // campaign: step done (token sync)
	tagGo       = comm.SystemTag(124) // campaign: step may start
	tagPatData  = comm.SystemTag(130) // patterns: payloads
	tagPatVote  = comm.SystemTag(131) // patterns: convergence votes
	tagPatGo    = comm.SystemTag(132) // patterns: continue / stop
	tagPatRes   = comm.SystemTag(133) // patterns: statistics to rank 0
	tagSwarmRes = comm.SystemTag(170) // swarm: counts to rank 0
	tagBulk     = comm.SystemTag(140) // bandwidth: bulk payload
	tagBulkAck  = comm.SystemTag(141)
	tagBulkCtl  = comm.SystemTag(142)
)

// ctlMsg is a small fixed-size control message: an operation and two
// integer arguments.
type ctlMsg struct {
	Op   int64
	A, B int64
}

const ctlSize = 24

func (m ctlMsg) encode() []byte {
	b := make([]byte, ctlSize)
	binary.LittleEndian.PutUint64(b[0:], uint64(m.Op))
	binary.LittleEndian.PutUint64(b[8:], uint64(m.A))
	binary.LittleEndian.PutUint64(b[16:], uint64(m.B))
	return b
}

func decodeCtl(b []byte) ctlMsg {
	if len(b) < ctlSize {
		return ctlMsg{Op: -1}
	}
	return ctlMsg{
		Op: int64(binary.LittleEndian.Uint64(b[0:])),
		A:  int64(binary.LittleEndian.Uint64(b[8:])),
		B:  int64(binary.LittleEndian.Uint64(b[16:])),
	}
}
