package coll

// Open MPI's fixed broadcast decision (coll/tuned, no rules file), as given
// in the reference table (v4.1.x and v5.0.x): the algorithm is chosen from
// the communicator size P and the message size S in bytes, and runs with
// segment size 0 and fan-out 0, i.e. unsegmented, with the k-nomial radix
// at its default of 4.

// Open MPI bcast algorithm ids.
const (
	OMPIBasicLinear         = 1
	OMPIChain               = 2
	OMPIPipeline            = 3
	OMPISplitBinaryTree     = 4
	OMPIBinaryTree          = 5
	OMPIBinomial            = 6
	OMPIKnomial             = 7
	OMPIScatterAllgather    = 8
	OMPIScatterAllgatherRng = 9
)

// ompiRule is "S < below: algorithm"; below 0 closes the list.
type ompiRule struct{ below, alg int }

var ompiTable = []struct {
	pBelow int // rules apply when P < pBelow (0: any larger P)
	rules  []ompiRule
}{
	{4, []ompiRule{{32, 3}, {256, 5}, {512, 3}, {1024, 7}, {32768, 1}, {131072, 5}, {262144, 2}, {524288, 1}, {1048576, 6}, {-1, 5}}},
	{8, []ompiRule{{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}, {-1, 2}}},
	{16, []ompiRule{{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}, {-1, 1}}},
	{32, []ompiRule{{4096, 7}, {1048576, 6}, {-1, 8}}},
	{64, []ompiRule{{2048, 6}, {-1, 7}}},
	{128, []ompiRule{{-1, 7}}},
	{256, []ompiRule{{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}, {-1, 7}}},
	{1024, []ompiRule{{16384, 7}, {32768, 4}, {-1, 7}}},
	{2048, []ompiRule{{524288, 7}, {-1, 8}}},
	{4096, []ompiRule{{262144, 7}, {-1, 8}}},
	{0, []ompiRule{{8192, 7}, {16384, 5}, {262144, 7}, {-1, 8}}},
}

// OMPIFixedBcastID returns the Open MPI algorithm id (1..9) the fixed
// decision picks for P ranks and S bytes.
func OMPIFixedBcastID(p, s int) int {
	for _, row := range ompiTable {
		if row.pBelow != 0 && p >= row.pBelow {
			continue
		}
		for _, r := range row.rules {
			if r.below < 0 || s < r.below {
				return r.alg
			}
		}
	}
	return OMPIBinaryTree // unreachable: the last row always matches
}

// OMPIAlgorithm maps an Open MPI bcast id, run as the fixed decision runs
// it (segment size 0, fan-out 0, radix 4), onto this package's builders:
//
//	1 basic_linear           -> linear
//	2 chain (fan-out 0 -> 1) -> chain    (Open MPI forces fan-out 0 to 1)
//	3 pipeline (segsize 0)   -> chain    (a pipeline of one segment is a chain)
//	4 split_binary_tree      -> split-binary (unsegmented; chain below 2 bytes)
//	5 binary_tree            -> binary   (Open MPI's level-numbered tree)
//	6 binomial               -> binomial (build_bmtree)
//	7 knomial                -> knomial, k = 4
//	8 scatter_allgather      -> scatter-allgather (linear below P bytes)
//	9 scatter_allgather_ring -> scatter-allgather-ring (linear below P bytes)
func OMPIAlgorithm(id int) (Algorithm, bool) {
	switch id {
	case OMPIBasicLinear:
		return Algorithm{Name: "linear"}, true
	case OMPIChain, OMPIPipeline:
		return Algorithm{Name: "chain"}, true
	case OMPISplitBinaryTree:
		return Algorithm{Name: "split-binary"}, true
	case OMPIBinaryTree:
		return Algorithm{Name: "binary"}, true
	case OMPIBinomial:
		return Algorithm{Name: "binomial"}, true
	case OMPIKnomial:
		return Algorithm{Name: "knomial", K: 4}, true
	case OMPIScatterAllgather:
		return Algorithm{Name: "scatter-allgather"}, true
	case OMPIScatterAllgatherRng:
		return Algorithm{Name: "scatter-allgather-ring"}, true
	}
	return Algorithm{}, false
}

// OMPIFixedBcast is what Open MPI's MPI_Bcast runs by default for P ranks
// and a message of S bytes, as one of this package's algorithms.
func OMPIFixedBcast(p, s int) Algorithm {
	a, _ := OMPIAlgorithm(OMPIFixedBcastID(p, s))
	return a
}
