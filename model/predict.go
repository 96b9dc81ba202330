package model

import (
	"fmt"
	"math"
	"math/bits"
)

// CeilLog2 is ceil(log2 p) for p >= 1 (0 for p <= 1): the number of rounds
// of a binomial tree over p ranks.
func CeilLog2(p int) int {
	if p <= 1 {
		return 0
	}
	return bits.Len(uint(p - 1))
}

// BinomialHockney is seed 000 Eq. 2.2: a binomial-tree broadcast of m bytes
// over p ranks takes ceil(log p) * (alpha + m*beta).
func BinomialHockney(p, m int, h Hockney) float64 {
	return float64(CeilLog2(p)) * h.Time(m)
}

// BinomialLogP is seed 000 Eq. 2.3: for small messages, assuming
// g < 2o + L, ceil(log p) * (2o + L).
func BinomialLogP(p int, l LogP) float64 { return float64(CeilLog2(p)) * (2*l.OS + l.LS) }

// BinomialLogGP is seed 000 Eq. 2.4: ceil(log p) * (2o + L + G(m-1)).
func BinomialLogGP(p, m int, l LogGP) float64 {
	return float64(CeilLog2(p)) * (2*l.OS + l.LS + l.GPerByteS*float64(max(m-1, 0)))
}

// FlatHockney is the flat (linear) tree under Hockney with blocking sends:
// the root sends p-1 messages one after another, (p-1)(alpha + m*beta).
// (The standard textbook form; the seed gives only the binomial.)
func FlatHockney(p, m int, h Hockney) float64 { return float64(max(p-1, 0)) * h.Time(m) }

// PipelineHockney is a chain of p ranks carrying m bytes in k segments of
// ceil(m/k) bytes: (p - 1 + k - 1) * (alpha + ceil(m/k)*beta), the
// standard pipeline bound (k = 1 is the plain chain).
func PipelineHockney(p, m, k int, h Hockney) float64 {
	if p <= 1 {
		return 0
	}
	k = max(k, 1)
	s := (m + k - 1) / k
	return float64(p-1+k-1) * h.Time(s)
}

// Tree is a broadcast schedule as the model sees it: a spanning tree over
// ranks 0..len(Parent)-1 with the children of every rank in the order it
// sends to them, and the segment size of the pipeline (0: unsegmented).
// Every rank forwards each segment to all its children, in order, before
// it forwards the next segment (Open MPI's segmented tree broadcast).
type Tree struct {
	Root     int
	Parent   []int
	Children [][]int
	SegBytes int
}

// Check validates the tree: parent and children lists agree, every rank is
// reached from the root exactly once.
func (t Tree) Check() error {
	n := len(t.Parent)
	if n == 0 || len(t.Children) != n {
		return fmt.Errorf("tree: %d parents, %d children lists", n, len(t.Children))
	}
	if t.Root < 0 || t.Root >= n || t.Parent[t.Root] != -1 {
		return fmt.Errorf("tree: root %d invalid or has a parent", t.Root)
	}
	if t.SegBytes < 0 {
		return fmt.Errorf("tree: segment size %d < 0", t.SegBytes)
	}
	seen := make([]bool, n)
	seen[t.Root] = true
	count := 1
	for _, r := range t.bfs() {
		for _, c := range t.Children[r] {
			if c < 0 || c >= n || seen[c] || t.Parent[c] != r {
				return fmt.Errorf("tree: rank %d: child %d out of range, repeated, or with another parent", r, c)
			}
			seen[c] = true
			count++
		}
	}
	if count != n {
		return fmt.Errorf("tree: %d of %d ranks reached from root %d", count, n, t.Root)
	}
	return nil
}

// bfs lists ranks parents-first, tolerating malformed trees (Check uses it).
func (t Tree) bfs() []int {
	n := len(t.Parent)
	order := []int{t.Root}
	seen := make([]bool, n)
	seen[t.Root] = true
	for i := 0; i < len(order); i++ {
		for _, c := range t.Children[order[i]] {
			if c >= 0 && c < n && !seen[c] {
				seen[c] = true
				order = append(order, c)
			}
		}
	}
	return order
}

// segments cuts m bytes into pieces of seg bytes (seg <= 0: one piece; a
// 0-byte message is one 0-byte piece).
func segments(m, seg int) []int {
	if seg <= 0 || m <= seg {
		return []int{m}
	}
	out := make([]int, 0, (m+seg-1)/seg)
	for left := m; left > 0; left -= seg {
		out = append(out, min(seg, left))
	}
	return out
}

// Prediction is the predicted broadcast: ReadyS[r] is when rank r holds the
// whole message; TimeS is the maximum over ranks (seed 000 Eq. 2.6).
type Prediction struct {
	TimeS  float64
	ReadyS []float64
}

// PredictBcast predicts a broadcast of m bytes along t under pm.
//
// Unsegmented it is seed 000 Eq. 2.6-2.7 generalised to any PairModel:
// T(i) = T(parent) + sum over the siblings sent before i, and i itself, of
// the parent's send cost, + the rest of the way to i. With SXR this is
// Eq. 2.7 term by term. Segmented, a rank sends segment s to all its
// children in order once it holds s and its previous send has ended, and
// a rank holds segment s only after segment s-1.
func PredictBcast(t Tree, m int, pm PairModel) (Prediction, error) {
	if err := t.Check(); err != nil {
		return Prediction{}, err
	}
	if m < 0 {
		return Prediction{}, fmt.Errorf("predict bcast: message size %d < 0", m)
	}
	segs := segments(m, t.SegBytes)
	n := len(t.Parent)
	// have[r][s]: when rank r holds segment s.
	have := make([][]float64, n)
	for r := range have {
		have[r] = make([]float64, len(segs))
	}
	for _, r := range t.bfs() {
		free := 0.0
		for s, size := range segs {
			for _, c := range t.Children[r] {
				cost := pm.Cost(r, c, size)
				start := math.Max(have[r][s], free)
				free = start + cost.SendS
				at := free + cost.RestS
				if s > 0 {
					at = math.Max(at, have[c][s-1])
				}
				have[c][s] = at
			}
		}
	}
	p := Prediction{ReadyS: make([]float64, n)}
	for r := range have {
		p.ReadyS[r] = have[r][len(segs)-1]
		p.TimeS = math.Max(p.TimeS, p.ReadyS[r])
	}
	return p, nil
}

// PointToPoint predicts one m-byte message from i to j under pm.
func PointToPoint(pm PairModel, i, j, m int) float64 { return pm.Cost(i, j, m).Total() }
