package tune

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"netaware/coll"
	"netaware/comm"
)

// Collective is an MPI collective the tuner measures and writes rules for.
// The zero value is the broadcast (bench.json files written before the
// other collectives had no collective field).
type Collective string

// The collectives tune measures. Their message size is always the size of
// the whole vector, the size Open MPI's rules file and MPICH's selection
// compare (coll_tuned_decision_dynamic.c, csel.c): the broadcast buffer, the
// reduced vector, or for the block collectives all P blocks together (the
// scattered or gathered buffer at the root, the gathered result of
// allgather, the vector a reduce-scatter cuts into P blocks).
const (
	Bcast         Collective = "bcast"
	Scatter       Collective = "scatter"
	Gather        Collective = "gather"
	Reduce        Collective = "reduce"
	Allgather     Collective = "allgather"
	Allreduce     Collective = "allreduce"
	ReduceScatter Collective = "reduce_scatter"
)

// Collectives lists every collective in the order rule files hold them.
var Collectives = []Collective{Bcast, Scatter, Gather, Reduce, Allgather, Allreduce, ReduceScatter}

// ParseCollective reads a collective's name ("reduce-scatter" is accepted
// for reduce_scatter).
func ParseCollective(s string) (Collective, error) {
	k := Collective(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if slices.Contains(Collectives, k) {
		return k, nil
	}
	var names []string
	for _, c := range Collectives {
		names = append(names, string(c))
	}
	return "", fmt.Errorf("unknown collective %q (have %s)", s, strings.Join(names, ", "))
}

func (k Collective) orBcast() Collective {
	if k == "" {
		return Bcast
	}
	return k
}

func (k Collective) String() string { return string(k.orBcast()) }

// ompiIDs are the coll_tuned collective ids of rules files (the COLLTYPE
// enum of Open MPI's coll_base_functions.h, the same in 4.1, 5.0 and 6.0).
var ompiIDs = map[Collective]int{
	Allgather: 0, Allreduce: 2, Bcast: 7, Gather: 9, Reduce: 11, ReduceScatter: 12, Scatter: 15,
}

// OMPIID is the collective's id in an Open MPI rules file.
func (k Collective) OMPIID() int { return ompiIDs[k.orBcast()] }

// ReduceOp is the reduction the reducing collectives are measured with: a
// sum of 4-byte floats, as collbench's MPI_SUM over MPI_FLOAT.
var ReduceOp = coll.SumFloat32

func (k Collective) reduces() bool {
	switch k.orBcast() {
	case Reduce, Allreduce, ReduceScatter:
		return true
	}
	return false
}

// blocked tells whether the vector is P blocks, one per rank.
func (k Collective) blocked() bool {
	switch k.orBcast() {
	case Scatter, Gather, Allgather, ReduceScatter:
		return true
	}
	return false
}

// Normalize is the message size actually measured for a requested size n
// on p ranks: rounded up to whole elements of ReduceOp for the reducing
// collectives, and to p equal blocks for the block collectives (Open MPI
// and MPICH see p times the block, so the rules' boundaries stay exact).
func (k Collective) Normalize(p, n int) int {
	if n <= 0 || p < 1 {
		return max(n, 0)
	}
	unit := 1
	if k.reduces() {
		unit = ReduceOp.ElemSize
	}
	if k.blocked() {
		unit *= p
	}
	return (n + unit - 1) / unit * unit
}

// runs tells whether algorithm info can run collective k: the exchange
// algorithms (recursive doubling, Rabenseifner, rings) only run allreduce
// and reduce-scatter; on every other collective they would run as the
// binomial tree they carry for rooted operations. The performance-aware
// builders weigh their trees for a broadcast of the whole message, which
// no other collective sends along every edge.
func (k Collective) runs(in coll.Info) bool {
	switch {
	case in.Exchange:
		return k == Allreduce || k == ReduceScatter
	case in.ModelAware:
		return k.orBcast() == Bcast
	}
	return true
}

// op returns rank me's part of one run of the collective on schedule s
// for a message of n bytes (see Normalize), with its buffers allocated
// once: the buffers a rank does not use in MPI (the root's full vector
// elsewhere) are not allocated. The contents are timed, not checked, so
// the broadcast's buffer is comm.Scratch: in the simulator every rank
// shares it (512 ranks x 4 MiB was 2 GB).
func (k Collective) op(c comm.Comm, s *coll.Schedule, p, n int) (func(ctx context.Context, c comm.Comm) error, error) {
	if n != k.Normalize(p, n) {
		return nil, fmt.Errorf("%s of %d bytes on %d ranks: not a whole number of blocks or elements", k, n, p)
	}
	root := c.Rank() == s.Root
	full := func(need bool) []byte {
		if need {
			return make([]byte, n)
		}
		return nil
	}
	switch k.orBcast() {
	case Bcast:
		buf := comm.Scratch(c, n)
		return func(ctx context.Context, c comm.Comm) error { return s.Bcast(ctx, c, buf) }, nil
	case Scatter:
		send, recv := full(root), make([]byte, n/p)
		return func(ctx context.Context, c comm.Comm) error { return s.Scatter(ctx, c, send, recv) }, nil
	case Gather:
		send, recv := make([]byte, n/p), full(root)
		return func(ctx context.Context, c comm.Comm) error { return s.Gather(ctx, c, send, recv) }, nil
	case Allgather:
		send, recv := make([]byte, n/p), make([]byte, n)
		return func(ctx context.Context, c comm.Comm) error { return s.Allgather(ctx, c, send, recv) }, nil
	case Reduce:
		send, recv := make([]byte, n), full(root)
		return func(ctx context.Context, c comm.Comm) error { return s.Reduce(ctx, c, send, recv, ReduceOp) }, nil
	case Allreduce:
		send, recv := make([]byte, n), make([]byte, n)
		return func(ctx context.Context, c comm.Comm) error { return s.Allreduce(ctx, c, send, recv, ReduceOp) }, nil
	case ReduceScatter:
		send, recv := make([]byte, n), make([]byte, n/p)
		return func(ctx context.Context, c comm.Comm) error { return s.ReduceScatter(ctx, c, send, recv, ReduceOp) }, nil
	}
	return nil, fmt.Errorf("unknown collective %q", k)
}

// OMPIEquivalentFor maps one of our algorithms onto Open MPI's coll/tuned
// algorithm of collective k on p ranks (ids as ompi_info --param coll
// tuned --level 9 lists them for Open MPI 4.1), when Open MPI runs the
// same schedule:
//
//	bcast           see OMPIEquivalent
//	scatter    15:  linear 1 (basic_linear), binomial 2
//	gather      9:  linear 1 (basic_linear), binomial 2
//	reduce     11:  linear 1, chain 2 (fan-in 1; k-chain: k), pipeline 3,
//	                binary 4, binomial 5, each with its segment size
//	allgather   0:  scatter-allgather's recursive doubling 3 (P a power of
//	                two: Open MPI runs Bruck otherwise), scatter-allgather-ring's ring 4
//	allreduce   2:  linear 1 (basic_linear: linear reduce, linear bcast),
//	                recursive-doubling 3, ring 4, rabenseifner 6
//	reduce_scatter 12: rabenseifner's recursive halving 2, ring 3
//
// Open MPI's nonoverlapping allreduce (2) and reduce-scatter (1), linear
// allgather (1) and Bruck/neighbour exchanges run what its fixed decision
// picks or algorithms netaware does not have, so nothing maps onto them.
func OMPIEquivalentFor(k Collective, a coll.Algorithm, p int) (OMPIRule, bool) {
	k = k.orBcast()
	if k == Bcast {
		return OMPIEquivalent(a)
	}
	r := OMPIRule{Note: a.String()}
	whole := a.SegSize == 0
	switch k {
	case Scatter, Gather:
		switch {
		case a.Name == "linear" && whole:
			r.Alg = 1
		case a.Name == "binomial" && whole:
			r.Alg = 2
		default:
			return OMPIRule{}, false
		}
	case Reduce:
		r.SegBytes = a.SegSize
		switch a.Name {
		case "linear":
			if !whole {
				return OMPIRule{}, false
			}
			r.Alg = 1
		case "chain":
			r.Alg, r.FanInOut = 2, 1
		case "k-chain":
			r.Alg, r.FanInOut = 2, a.K
			if a.K == 0 {
				r.FanInOut = 4
			}
		case "pipeline":
			r.Alg = 3
		case "binary":
			r.Alg = 4
		case "binomial":
			r.Alg = 5
		default:
			return OMPIRule{}, false
		}
	case Allgather:
		switch {
		case a.Name == "scatter-allgather" && p&(p-1) == 0:
			r.Alg = 3
		case a.Name == "scatter-allgather-ring":
			r.Alg = 4
		default:
			return OMPIRule{}, false
		}
	case Allreduce:
		switch {
		case a.Name == "linear" && whole:
			r.Alg = 1
		case a.Name == "recursive-doubling":
			r.Alg = 3
		case a.Name == "ring":
			r.Alg = 4
		case a.Name == "rabenseifner":
			r.Alg = 6
		default:
			return OMPIRule{}, false
		}
	case ReduceScatter:
		switch a.Name {
		case "rabenseifner":
			r.Alg = 2
		case "ring":
			r.Alg = 3
		default:
			return OMPIRule{}, false
		}
	default:
		return OMPIRule{}, false
	}
	return r, true
}

// takesSegmentFor tells whether Open MPI runs the algorithm of this name
// with a segment size for collective k (the rules file's 4th column), so
// that the tuner tries it segmented: bcast's trees and reduce's.
func takesSegmentFor(k Collective, name string) bool {
	switch k.orBcast() {
	case Bcast:
		return TakesSegment(name)
	case Reduce:
		r, ok := OMPIEquivalentFor(Reduce, coll.Algorithm{Name: name, SegSize: 1}, 2)
		return ok && r.SegBytes > 0
	}
	return false
}

// MPICH algorithms of the collectives other than bcast (MPICH 4.0's names
// in its selection JSON).
const (
	MPICHScatterBinomial      = "MPIR_Scatter_intra_binomial"
	MPICHGatherBinomial       = "MPIR_Gather_intra_binomial"
	MPICHReduceBinomial       = "MPIR_Reduce_intra_binomial"
	MPICHReduceSMP            = "MPIR_Reduce_intra_smp"
	MPICHAllgatherRD          = "MPIR_Allgather_intra_recursive_doubling"
	MPICHAllgatherRing        = "MPIR_Allgather_intra_ring"
	MPICHAllreduceRD          = "MPIR_Allreduce_intra_recursive_doubling"
	MPICHAllreduceRSAG        = "MPIR_Allreduce_intra_reduce_scatter_allgather"
	MPICHAllreduceSMP         = "MPIR_Allreduce_intra_smp"
	MPICHReduceScatterHalving = "MPIR_Reduce_scatter_intra_recursive_halving"
)

// MPICHEquivalentFor maps one of our algorithms onto an MPICH algorithm of
// collective k on p ranks; exact reports whether MPICH runs the same
// schedule. The smp algorithms (node leaders) approximate magpie2 (reduce)
// and levels-allreduce (allreduce) at the host level with binomial trees
// inside the hosts.
func MPICHEquivalentFor(k Collective, a coll.Algorithm, p int, levelName func(level int) string) (name string, exact, ok bool) {
	k = k.orBcast()
	whole := a.SegSize == 0
	atHost := func() bool {
		return (a.Base == "" || a.Base == "binomial") && levelName != nil && levelName(a.Level) == mpichSMPHierLevel
	}
	switch k {
	case Bcast:
		return MPICHEquivalent(a, levelName)
	case Scatter:
		if a.Name == "binomial" && whole {
			return MPICHScatterBinomial, true, true
		}
	case Gather:
		if a.Name == "binomial" && whole {
			return MPICHGatherBinomial, true, true
		}
	case Reduce:
		if a.Name == "binomial" && whole {
			return MPICHReduceBinomial, true, true
		}
		if a.Name == "magpie2" && atHost() {
			return MPICHReduceSMP, false, true
		}
	case Allgather:
		if a.Name == "scatter-allgather" && p&(p-1) == 0 {
			return MPICHAllgatherRD, true, true
		}
		if a.Name == "scatter-allgather-ring" {
			return MPICHAllgatherRing, true, true
		}
	case Allreduce:
		switch a.Name {
		case "recursive-doubling":
			return MPICHAllreduceRD, true, true
		case "rabenseifner":
			return MPICHAllreduceRSAG, true, true
		case "levels-allreduce":
			if atHost() {
				return MPICHAllreduceSMP, false, true
			}
		}
	case ReduceScatter:
		if a.Name == "rabenseifner" {
			return MPICHReduceScatterHalving, true, true
		}
	}
	return "", false, false
}

// Runs tells whether the algorithm of this name runs collective k (auto
// and ompi-fixed resolve to broadcast algorithms and run every collective
// as one).
func (k Collective) Runs(name string) bool {
	in, ok := info(name)
	if !ok {
		return name == "auto" || name == "ompi-fixed"
	}
	return k.runs(in)
}
