package topo

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// HostPartition groups ranks by the host they reported, hosts in order of
// their lowest rank. It fails, naming the rank, when a host is unknown.
func (t *Topology) HostPartition() (groups [][]int, hosts []string, err error) {
	idx := map[string]int{}
	for _, r := range t.Ranks {
		if r.Host == "" {
			return nil, nil, fmt.Errorf("rank %d has no host name (discovery ran blind?)", r.Rank)
		}
		i, ok := idx[r.Host]
		if !ok {
			i = len(groups)
			idx[r.Host] = i
			groups = append(groups, nil)
			hosts = append(hosts, r.Host)
		}
		groups[i] = append(groups[i], r.Rank)
	}
	return groups, hosts, nil
}

// coarserChain returns the levels that are unions of base's groups and
// strictly coarser than base and than each other, finest first: the part of
// the hierarchy above base that a format can express. Levels that split a
// base group (an inference error across a host, say) are left out.
func coarserChain(base [][]int, levels []Level, size int) []Level {
	var out []Level
	count := len(base)
	for _, l := range levels {
		where := l.Labels(size)
		unions := true
		for _, g := range base {
			for _, r := range g[1:] {
				if where[r] != where[g[0]] {
					unions = false
				}
			}
		}
		if unions && len(l.Groups) < count {
			out = append(out, l)
			count = len(l.Groups)
		}
	}
	return out
}

// nest is a node of a nested grouping (switch, cluster) over ranks: either
// a leaf with ranks or an inner node with children.
type nest struct {
	name  string
	ranks []int
	kids  []*nest
}

func (n *nest) allRanks() []int {
	if len(n.kids) == 0 {
		return n.ranks
	}
	var out []int
	out = append(out, n.ranks...)
	for _, k := range n.kids {
		out = append(out, k.allRanks()...)
	}
	return out
}

// hostNest is the nesting of the hosts by every level above them (the
// chain of coarser levels, no layer collapsed) and, for each rank, the
// index of its host in hostGroups: what the Slurm writers walk.
func hostNest(hostGroups [][]int, levels []Level, size int) (root *nest, chain []Level, hostOf []int) {
	hostOf = make([]int, size)
	for hi, g := range hostGroups {
		for _, r := range g {
			hostOf[r] = hi
		}
	}
	chain = coarserChain(hostGroups, levels, size)
	return nestFromLevels(hostGroups, chain, size, false), chain, hostOf
}

// heights records the height of n and every node below it (leaves 0) in h
// and returns n's.
func heights(n *nest, h map[*nest]int) int {
	x := 0
	for _, k := range n.kids {
		x = max(x, heights(k, h)+1)
	}
	h[n] = x
	return x
}

// levelsFromNest turns nested groups into levels by height: level h groups
// the ranks under each maximal node of height <= h (leaves have height 0),
// so unequal depths still give a chain of coarsenings. Repeated partitions
// are dropped. Names are prefix-0, prefix-1, ...
func levelsFromNest(roots []*nest, prefix string) []Level {
	height := map[*nest]int{}
	top := 0
	for _, r := range roots {
		top = max(top, heights(r, height))
	}
	var out []Level
	for h := 0; h <= top; h++ {
		var groups [][]int
		var walk func(n *nest)
		walk = func(n *nest) {
			if height[n] <= h {
				if g := n.allRanks(); len(g) > 0 {
					g = slices.Clone(g)
					sort.Ints(g)
					groups = append(groups, g)
				}
				return
			}
			for _, k := range n.kids {
				walk(k)
			}
		}
		for _, r := range roots {
			walk(r)
		}
		sort.Slice(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
		if len(out) > 0 && EqualGroups(out[len(out)-1].Groups, groups) {
			continue
		}
		out = append(out, Level{Name: prefix + "-" + strconv.Itoa(h), Groups: groups})
	}
	return out
}

// EqualGroups reports whether a and b hold the same groups in the same
// order, each with the same ranks in the same order: equal partitions when
// both are canonical (ranks sorted, groups ordered by first rank), as every
// level this project builds is.
func EqualGroups(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// nestFromLevels builds the hierarchy of base groups under the chain of
// coarser levels: leaves are base groups, each chain level adds a layer, and
// a single root covers everything. Children are ordered by lowest rank.
// With collapse, a node with a single child (a group that does not change
// from one level to the next) is replaced by that child, which is what
// people want to see; without it every layer is kept, so that the depth of
// a node still says which level it belongs to (formats that are read back
// by height need that).
func nestFromLevels(base [][]int, chain []Level, size int, collapse bool) *nest {
	layer := make([]*nest, len(base))
	for i, g := range base {
		layer[i] = &nest{ranks: g}
	}
	addLayer := func(groups [][]int) {
		where := make([]int, size)
		for gi, g := range groups {
			for _, r := range g {
				where[r] = gi
			}
		}
		up := make([]*nest, len(groups))
		for i := range up {
			up[i] = &nest{}
		}
		for _, n := range layer {
			p := up[where[n.allRanks()[0]]]
			p.kids = append(p.kids, n)
		}
		layer = up
	}
	for _, l := range chain {
		addLayer(l.Groups)
	}
	if len(layer) > 1 {
		all := make([]int, size)
		for i := range all {
			all[i] = i
		}
		addLayer([][]int{all})
	}
	var tidy func(n *nest) *nest
	tidy = func(n *nest) *nest {
		for i, k := range n.kids {
			n.kids[i] = tidy(k)
		}
		if collapse && len(n.kids) == 1 && len(n.ranks) == 0 {
			return n.kids[0]
		}
		sort.SliceStable(n.kids, func(i, j int) bool { return minRank(n.kids[i]) < minRank(n.kids[j]) })
		return n
	}
	return tidy(layer[0])
}

func minRank(n *nest) int {
	m := -1
	for _, r := range n.allRanks() {
		if m < 0 || r < m {
			m = r
		}
	}
	return m
}

// FormatRanks writes sorted ranks as comma-separated ranges: 0-3,8,10-11.
func FormatRanks(ranks []int) string {
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if i == j {
			b.WriteString(strconv.Itoa(ranks[i]))
		} else {
			fmt.Fprintf(&b, "%d-%d", ranks[i], ranks[j])
		}
		i = j + 1
	}
	return b.String()
}

// maxRank bounds rank numbers in hand-written files, so a typo like
// 0-99999999999 is an error, not an allocation of gigabytes.
const maxRank = 1 << 20

// ParseRanks reads ranks written as ranges separated by commas or spaces
// ("0-7", "0-3, 8-11", "1 2 5"); the inverse of FormatRanks.
func ParseRanks(s string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		lo, hi, isRange := strings.Cut(f, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a || b > maxRank {
			return nil, fmt.Errorf("bad rank range %q", f)
		}
		if len(out)+(b-a+1) > maxRank {
			return nil, fmt.Errorf("too many ranks (over %d)", maxRank)
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// topologyFromLevels makes a valid topology of size ranks with no host hints
// around levels read from another format.
func topologyFromLevels(size int, levels []Level, method string) (*Topology, error) {
	t := &Topology{Version: Version, Size: size, Levels: levels, Method: &Method{Name: method}}
	for r := 0; r < size; r++ {
		t.Ranks = append(t.Ranks, Rank{Rank: r})
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}
