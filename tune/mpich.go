package tune

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"netaware/coll"
)

// MPICH bcast algorithms selectable from its tuning JSON (MPICH 4.0's
// MPIR-level collective selection, MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE).
const (
	mpichBcastPrefix  = "MPIR_Bcast_intra_"
	MPICHBinomial     = mpichBcastPrefix + "binomial"
	MPICHScatterRDAG  = mpichBcastPrefix + "scatter_recursive_doubling_allgather"
	MPICHScatterRing  = mpichBcastPrefix + "scatter_ring_allgather"
	MPICHSMP          = mpichBcastPrefix + "smp"
	mpichInterBcast   = "MPIR_Bcast_inter_remote_send_local_bcast"
	mpichSMPHierLevel = "host"
)

// MPICHEquivalent maps one of our algorithms onto an MPICH bcast
// algorithm: binomial-inorder, scatter-allgather (recursive doubling),
// and scatter-allgather-ring exactly; magpie2 at the host level with
// binomial inside approximately as MPIR_Bcast_intra_smp (intra-node to the
// node leader, among node leaders, then inside each node). exact reports
// whether MPICH runs the same schedule. MPICH's trees take no segment
// size, so a segmented binomial tree (whose time can be far from the
// whole one's) has no equivalent. Open MPI's binomial tree ("binomial")
// has none either: it puts other ranks in the same shape (coll.BinomialInOrder),
// and on star-2x4-cyclic it measured 1.72 s at 16 MiB where MPICH's
// binomial took 6.2 s (docs/tuning.md).
func MPICHEquivalent(a coll.Algorithm, levelName func(level int) string) (name string, exact, ok bool) {
	switch a.Name {
	case "binomial-inorder":
		if a.SegSize > 0 {
			return "", false, false
		}
		return MPICHBinomial, true, true
	case "scatter-allgather":
		return MPICHScatterRDAG, true, true
	case "scatter-allgather-ring":
		return MPICHScatterRing, true, true
	case "magpie2":
		if (a.Base == "" || a.Base == "binomial") && levelName != nil && levelName(a.Level) == mpichSMPHierLevel {
			return MPICHSMP, false, true
		}
	}
	return "", false, false
}

// MPICHRange is a size range with the MPICH algorithm chosen for it.
type MPICHRange struct {
	FromBytes  int
	BelowBytes int // 0: no upper bound
	Algorithm  string
}

// mpichFallback is, per collective, the algorithm for intra- and
// inter-communicators (and, where MPICH requires it, for in-place
// buffers). MPICH's MPIR selection asserts when a collective has no match
// in the file, so a file must cover every collective, tuned or not; these
// are general algorithms without preconditions, not tuned ones.
var mpichFallback = []struct {
	coll, intra, inplace, inter string
}{
	{"bcast", MPICHBinomial, "", mpichInterBcast},
	{"barrier", "MPIR_Barrier_intra_dissemination", "", "MPIR_Barrier_inter_bcast"},
	{"allreduce", "MPIR_Allreduce_intra_recursive_doubling", "", "MPIR_Allreduce_inter_reduce_exchange_bcast"},
	{"allgather", "MPIR_Allgather_intra_ring", "", "MPIR_Allgather_inter_local_gather_remote_bcast"},
	{"allgatherv", "MPIR_Allgatherv_intra_ring", "", "MPIR_Allgatherv_inter_remote_gather_local_bcast"},
	{"alltoall", "MPIR_Alltoall_intra_pairwise", "MPIR_Alltoall_intra_pairwise_sendrecv_replace", "MPIR_Alltoall_inter_pairwise_exchange"},
	{"alltoallv", "MPIR_Alltoallv_intra_scattered", "MPIR_Alltoallv_intra_pairwise_sendrecv_replace", "MPIR_Alltoallv_inter_pairwise_exchange"},
	{"alltoallw", "MPIR_Alltoallw_intra_scattered", "MPIR_Alltoallw_intra_pairwise_sendrecv_replace", "MPIR_Alltoallw_inter_pairwise_exchange"},
	{"reduce", "MPIR_Reduce_intra_binomial", "", "MPIR_Reduce_inter_local_reduce_remote_send"},
	{"reduce_scatter", "MPIR_Reduce_scatter_intra_recursive_doubling", "", "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter"},
	{"reduce_scatter_block", "MPIR_Reduce_scatter_block_intra_recursive_doubling", "", "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter"},
	{"gather", "MPIR_Gather_intra_binomial", "", "MPIR_Gather_inter_linear"},
	{"scatter", "MPIR_Scatter_intra_binomial", "", "MPIR_Scatter_inter_linear"},
	{"gatherv", "MPIR_Gatherv_allcomm_linear", "", ""},
	{"scatterv", "MPIR_Scatterv_allcomm_linear", "", ""},
	{"scan", "MPIR_Scan_intra_recursive_doubling", "", ""},
	{"exscan", "MPIR_Exscan_intra_recursive_doubling", "", ""},
	{"neighbor_allgather", "MPIR_Neighbor_allgather_allcomm_nb", "", ""},
	{"neighbor_allgatherv", "MPIR_Neighbor_allgatherv_allcomm_nb", "", ""},
	{"neighbor_alltoall", "MPIR_Neighbor_alltoall_allcomm_nb", "", ""},
	{"neighbor_alltoallv", "MPIR_Neighbor_alltoallv_allcomm_nb", "", ""},
	{"neighbor_alltoallw", "MPIR_Neighbor_alltoallw_allcomm_nb", "", ""},
	{"ibarrier", "MPIR_Ibarrier_intra_sched_recursive_doubling", "", "MPIR_Ibarrier_inter_sched_bcast"},
	{"ibcast", "MPIR_Ibcast_intra_sched_binomial", "", "MPIR_Ibcast_inter_sched_flat"},
	{"iallreduce", "MPIR_Iallreduce_intra_sched_naive", "", "MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast"},
	{"iallgather", "MPIR_Iallgather_intra_sched_ring", "", "MPIR_Iallgather_inter_sched_local_gather_remote_bcast"},
	{"iallgatherv", "MPIR_Iallgatherv_intra_sched_ring", "", "MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast"},
	{"ialltoall", "MPIR_Ialltoall_intra_sched_pairwise", "MPIR_Ialltoall_intra_sched_inplace", "MPIR_Ialltoall_inter_sched_pairwise_exchange"},
	{"ialltoallv", "MPIR_Ialltoallv_intra_sched_blocked", "MPIR_Ialltoallv_intra_sched_inplace", "MPIR_Ialltoallv_inter_sched_pairwise_exchange"},
	{"ialltoallw", "MPIR_Ialltoallw_intra_sched_blocked", "MPIR_Ialltoallw_intra_sched_inplace", "MPIR_Ialltoallw_inter_sched_pairwise_exchange"},
	{"ireduce", "MPIR_Ireduce_intra_sched_binomial", "", "MPIR_Ireduce_inter_sched_local_reduce_remote_send"},
	{"ireduce_scatter", "MPIR_Ireduce_scatter_intra_sched_recursive_doubling", "", "MPIR_Ireduce_scatter_inter_sched_remote_reduce_local_scatterv"},
	{"ireduce_scatter_block", "MPIR_Ireduce_scatter_block_intra_sched_recursive_doubling", "", "MPIR_Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv"},
	{"igather", "MPIR_Igather_intra_sched_binomial", "", "MPIR_Igather_inter_sched_long"},
	{"iscatter", "MPIR_Iscatter_intra_sched_binomial", "", "MPIR_Iscatter_inter_sched_linear"},
	{"igatherv", "MPIR_Igatherv_allcomm_sched_linear", "", ""},
	{"iscatterv", "MPIR_Iscatterv_allcomm_sched_linear", "", ""},
	{"iscan", "MPIR_Iscan_intra_sched_recursive_doubling", "", ""},
	{"iexscan", "MPIR_Iexscan_intra_sched_recursive_doubling", "", ""},
	{"ineighbor_allgather", "MPIR_Ineighbor_allgather_allcomm_sched_linear", "", ""},
	{"ineighbor_allgatherv", "MPIR_Ineighbor_allgatherv_allcomm_sched_linear", "", ""},
	{"ineighbor_alltoall", "MPIR_Ineighbor_alltoall_allcomm_sched_linear", "", ""},
	{"ineighbor_alltoallv", "MPIR_Ineighbor_alltoallv_allcomm_sched_linear", "", ""},
	{"ineighbor_alltoallw", "MPIR_Ineighbor_alltoallw_allcomm_sched_linear", "", ""},
}

// node is an ordered JSON object (MPICH matches keys in file order).
type node struct {
	keys []string
	vals []*node
}

func (n *node) add(k string, v *node) *node {
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	return v
}

func leaf(alg string) *node {
	n := &node{}
	n.add("algorithm="+alg, &node{})
	return n
}

func (n *node) write(b *bytes.Buffer, indent string) {
	if len(n.keys) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteString("{\n")
	for i, k := range n.keys {
		b.WriteString(indent + "  ")
		b.Write(jsonString(k))
		b.WriteString(": ")
		n.vals[i].write(b, indent+"  ")
		if i+1 < len(n.keys) {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + "}")
}

// MPICHBlock is the ranges of one tuned communicator size.
type MPICHBlock struct {
	Ranks  int
	Ranges []MPICHRange
}

// MPICHSection is the tuned ranges of one collective.
type MPICHSection struct {
	Collective Collective
	Blocks     []MPICHBlock
}

// WriteMPICH renders the tuned bcast ranges alone; see WriteMPICHRules.
func WriteMPICH(blocks []MPICHBlock) ([]byte, error) {
	return WriteMPICHRules([]MPICHSection{{Collective: Bcast, Blocks: blocks}})
}

// mpichSizeKey is the message size MPICH's selection compares for a
// collective (csel.c): avg_msg_size is the vector of bcast, reduce and
// allreduce (MPICH asserts when another collective asks for it);
// total_msg_size is all P blocks of the block collectives. Both are the
// size tune measures (see Collective).
func mpichSizeKey(k Collective) string {
	if k.blocked() {
		return "total_msg_size"
	}
	return "avg_msg_size"
}

// mpichDefaults are a collective's general intra- and inter-communicator
// algorithms (mpichFallback; bcast's are binomial and the inter one).
func mpichDefaults(k Collective) (intra, inter string) {
	k = k.orBcast()
	for _, f := range mpichFallback {
		if f.coll == string(k) {
			return f.intra, f.inter
		}
	}
	return "", ""
}

// WriteMPICHRules renders the tuned ranges of every section as an MPICH
// collective-selection JSON file; blocks ascend by communicator size:
//
//	"collective=allreduce" -> "comm_type=intra" -> "comm_size<=P" ->
//	  "avg_msg_size<=N" ... "avg_msg_size=any" -> "algorithm=MPIR_Allreduce_intra_...";
//
// (total_msg_size for the block collectives, see mpichSizeKey). MPICH
// takes the first comm_size<=P that holds, so a block covers the sizes
// above the previous block's P up to its own. Larger communicators get the
// collective's general algorithm (mpichDefaults), smp algorithms are
// guarded by "comm_hierarchy=parent" (only a communicator with a node
// hierarchy can run them), and every collective not tuned gets the
// general fallback of mpichFallback.
func WriteMPICHRules(sections []MPICHSection) ([]byte, error) {
	if len(sections) == 0 {
		return nil, fmt.Errorf("tune: mpich file needs rules")
	}
	root := &node{}
	tuned := map[Collective]bool{}
	for _, sec := range sections {
		k := sec.Collective.orBcast()
		if tuned[k] {
			return nil, fmt.Errorf("tune: mpich: %s given twice", k)
		}
		tuned[k] = true
		def, inter := mpichDefaults(k)
		if def == "" {
			return nil, fmt.Errorf("tune: mpich: no %s algorithms known", k)
		}
		if len(sec.Blocks) == 0 {
			return nil, fmt.Errorf("tune: mpich: %s has no rules", k)
		}
		c := root.add("collective="+string(k), &node{})
		intra := c.add("comm_type=intra", &node{})
		for i, b := range sec.Blocks {
			if b.Ranks < 1 || len(b.Ranges) == 0 || (i > 0 && b.Ranks <= sec.Blocks[i-1].Ranks) {
				return nil, fmt.Errorf("tune: mpich %s block %d: communicator size %d without rules or not ascending", k, i, b.Ranks)
			}
			if err := mpichSizes(intra.add("comm_size<="+strconv.Itoa(b.Ranks), &node{}), mpichSizeKey(k), def, b.Ranges); err != nil {
				return nil, fmt.Errorf("%w (%s)", err, k)
			}
		}
		intra.add("comm_size=any", leaf(def))
		if inter != "" {
			c.add("comm_type=inter", leaf(inter))
		}
	}
	mpichFallbacks(root, tuned)
	var b bytes.Buffer
	root.write(&b, "")
	b.WriteString("\n")
	return b.Bytes(), nil
}

// mpichSizes adds the message-size rules of one communicator size; def
// replaces an smp algorithm on communicators without a node hierarchy.
func mpichSizes(sized *node, sizeKey, def string, rs []MPICHRange) error {
	for i, r := range rs {
		if i > 0 && r.FromBytes <= rs[i-1].FromBytes {
			return fmt.Errorf("tune: mpich ranges not ascending at %d bytes", r.FromBytes)
		}
		key := sizeKey + "=any"
		if i+1 < len(rs) {
			key = sizeKey + "<=" + strconv.Itoa(rs[i+1].FromBytes-1)
		}
		var v *node
		if strings.HasSuffix(r.Algorithm, "_intra_smp") {
			v = &node{}
			v.add("comm_hierarchy=parent", leaf(r.Algorithm))
			v.add("comm_hierarchy=any", leaf(def))
		} else {
			v = leaf(r.Algorithm)
		}
		sized.add(key, v)
	}
	return nil
}

// mpichFallbacks adds every collective not tuned.
func mpichFallbacks(root *node, tuned map[Collective]bool) {
	for _, f := range mpichFallback {
		if tuned[Collective(f.coll)] {
			continue
		}
		c := root.add("collective="+f.coll, &node{})
		if f.inter == "" && f.inplace == "" {
			c.add("algorithm="+f.intra, &node{})
			continue
		}
		in := &node{}
		if f.inplace != "" {
			in.add("is_sendbuf_inplace=yes", leaf(f.inplace))
			in.add("is_sendbuf_inplace=no", leaf(f.intra))
		} else {
			in = leaf(f.intra)
		}
		c.add("comm_type=intra", in)
		if f.inter != "" {
			c.add("comm_type=inter", leaf(f.inter))
		}
	}
}

// jsonString quotes s as JSON without escaping '<' and '>' (MPICH keys
// read better as written: "comm_size<=8").
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}
