package cluster

import (
	"fmt"
	"math"

	"netaware/topo"
)

// SSS is Sparse Spatial Selection used as a flat clustering (seed 003 Sect.
// 2.5.3): the first point is the first center; every other point, in order,
// joins the cluster with the closest center unless that distance exceeds
// M*alpha, M the largest distance between any two points, in which case it
// becomes a new center. Larger alpha gives fewer clusters.
func SSS(d *Matrix, alpha float64) (Labels, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("cluster sss: %w", err)
	}
	if math.IsNaN(alpha) || alpha < 0 {
		return nil, fmt.Errorf("cluster sss: alpha %v, want >= 0", alpha)
	}
	n := d.N
	var bigM float64
	for _, v := range d.Data {
		bigM = math.Max(bigM, v)
	}
	l := make(Labels, n)
	var centers []int
	for i := 0; i < n; i++ {
		best, dist := -1, math.Inf(1)
		for c, p := range centers {
			if d.At(i, p) < dist {
				best, dist = c, d.At(i, p)
			}
		}
		if best < 0 || dist > bigM*alpha {
			centers = append(centers, i)
			best = len(centers) - 1
		}
		l[i] = best
	}
	return l, nil
}

// SSSNode is one cluster of an SSSTree. Members lists every point below it,
// Members[0] being the center; Children is nil for a leaf (a single point,
// fewer than MinChildren members, or a cluster SSS does not split).
type SSSNode struct {
	Members  []int
	Radius   float64
	Children []*SSSNode
}

// Center is the point the cluster is organised around.
func (s *SSSNode) Center() int { return s.Members[0] }

// DefaultSSSMinChildren is the smallest cluster SSSTree tries to split.
const DefaultSSSMinChildren = 2

// SSSTree builds seed 003's SSSTree (Sect. 2.5.8, Fig. 2.5) top-down: the
// base tree is one cluster holding every point (point 0 its center); a
// cluster with at least minChildren members is split by SSS with M = 2 *
// radius (radius = largest distance from the center to a member, an upper
// bound on the cluster's diameter found in O(n)): a member whose closest
// center is at distance >= M*alpha starts a new cluster. Each new cluster
// is split the same way. A split that leaves everything in one cluster
// would recurse forever, so such a cluster stays a leaf. minChildren <= 0
// means DefaultSSSMinChildren.
func SSSTree(d *Matrix, alpha float64, minChildren int) (*SSSNode, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("cluster ssstree: %w", err)
	}
	if math.IsNaN(alpha) || alpha < 0 {
		return nil, fmt.Errorf("cluster ssstree: alpha %v, want >= 0", alpha)
	}
	if minChildren <= 0 {
		minChildren = DefaultSSSMinChildren
	}
	if d.N == 0 {
		return nil, fmt.Errorf("cluster ssstree: no points")
	}
	all := make([]int, d.N)
	for i := range all {
		all[i] = i
	}
	root := &SSSNode{Members: all}
	sssSplit(d, root, alpha, max(minChildren, 2))
	return root, nil
}

func sssSplit(d *Matrix, node *SSSNode, alpha float64, minChildren int) {
	if len(node.Members) < minChildren {
		return
	}
	center := node.Members[0]
	for _, p := range node.Members[1:] {
		node.Radius = math.Max(node.Radius, d.At(center, p))
	}
	m := 2 * node.Radius
	clusters := [][]int{{center}}
	for _, p := range node.Members[1:] {
		best, dist := 0, math.Inf(1)
		for c, members := range clusters {
			if v := d.At(p, members[0]); v < dist {
				best, dist = c, v
			}
		}
		if dist >= m*alpha {
			clusters = append(clusters, []int{p})
		} else {
			clusters[best] = append(clusters[best], p)
		}
	}
	if len(clusters) == 1 {
		return
	}
	for _, members := range clusters {
		child := &SSSNode{Members: members}
		sssSplit(d, child, alpha, minChildren)
		node.Children = append(node.Children, child)
	}
}

// Depth is the number of edges on the longest root-to-leaf path.
func (s *SSSNode) Depth() int {
	best := 0
	for _, c := range s.Children {
		best = max(best, 1+c.Depth())
	}
	return best
}

// Flat labels each point by its ancestor at the given depth below s (0 = s
// itself); points in leaves shallower than depth keep their leaf. Labels are
// numbered by smallest point. n is the total number of points.
func (s *SSSNode) Flat(n, depth int) (Labels, error) {
	l := make(Labels, n)
	for i := range l {
		l[i] = Noise
	}
	next := 0
	var walk func(node *SSSNode, dep int) error
	walk = func(node *SSSNode, dep int) error {
		if dep == depth || node.Children == nil {
			for _, p := range node.Members {
				if p < 0 || p >= n || l[p] != Noise {
					return fmt.Errorf("cluster ssstree: point %d out of range or listed twice", p)
				}
				l[p] = next
			}
			next++
			return nil
		}
		for _, c := range node.Children {
			if err := walk(c, dep+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(s, 0); err != nil {
		return nil, err
	}
	for i, v := range l {
		if v == Noise {
			return nil, fmt.Errorf("cluster ssstree: point %d not in the tree", i)
		}
	}
	return Canonical(l), nil
}

// Levels turns the tree into topology levels: the partition at every depth,
// deepest (finest) first, then "all".
func (s *SSSNode) Levels(n int) ([]topo.Level, error) {
	var parts []Labels
	for dep := s.Depth(); dep >= 1; dep-- {
		l, err := s.Flat(n, dep)
		if err != nil {
			return nil, err
		}
		parts = append(parts, l)
	}
	return LevelsFromPartitions(n, parts)
}
