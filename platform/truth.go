package platform

import (
	"fmt"
	"slices"

	"netaware/topo"
)

// Ground truth (docs/platform-format.md "Ground truth"); docs/platforms.md explains the
// rule for users.
//
//  1. socket: ranks sharing a host and a socket;
//  2. host: ranks sharing a host;
//  3. switch: ranks whose hosts hang off the same switch;
//  4. one level per height of the routed switch tree (see treeLevels);
//  5. the `truth:` levels, each inserted where it nests; a structural level
//     that cuts across a stated level is dropped (the stated level is what
//     the platform's author knows about performance, e.g. a bottleneck
//     splitting a switch's hosts);
//  6. all: one group.
//
// Consecutive identical levels are merged, keeping the later (coarser) name,
// so a platform with one rank per host has "host" but no "socket" level and
// the single-group level is always called "all".

// hostLevel is a partition of hosts (indices into Hosts()).
type hostLevel struct {
	name   string
	groups [][]int
	line   int // of a truth level, for messages; 0 for structural levels
}

// TruthLevels is Truth as topology levels (what topology.json, the
// scheduler and the comparisons take).
func (p *Platform) TruthLevels() []topo.Level {
	var out []topo.Level
	for _, l := range p.Truth() {
		out = append(out, topo.Level{Name: l.Name, Groups: l.Groups})
	}
	return out
}

// Truth returns the ground-truth levels, finest first, the last being "all".
func (p *Platform) Truth() []Level {
	hl, err := p.hostLevels()
	if err != nil {
		// Parse already ran hostLevels on the same hosts and truth specs,
		// and rank placement cannot change host-level nesting.
		panic(fmt.Sprintf("platform %s: %v", p.Name, err))
	}
	var levels []Level
	// Socket level: group ranks by (host, socket).
	bySocket := map[[2]int][]int{}
	for r, rp := range p.ranks {
		k := [2]int{rp.host, rp.socket}
		bySocket[k] = append(bySocket[k], r)
	}
	var socket [][]int
	for _, g := range bySocket {
		socket = append(socket, g)
	}
	levels = append(levels, Level{Name: "socket", Groups: canonical(socket)})
	for _, l := range hl {
		var groups [][]int
		for _, hg := range l.groups {
			var g []int
			for _, h := range hg {
				g = append(g, p.hostRanks[h]...)
			}
			groups = append(groups, g)
		}
		levels = append(levels, Level{Name: l.name, Groups: canonical(groups)})
	}
	return mergeIdentical(levels)
}

// mergeIdentical drops a level when the next one is the same partition, so
// that the later (coarser) name survives.
func mergeIdentical(levels []Level) []Level {
	var out []Level
	for i, l := range levels {
		if i+1 < len(levels) && topo.EqualGroups(l.Groups, levels[i+1].Groups) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// canonical sorts each group and orders groups by their first member.
func canonical(groups [][]int) [][]int {
	for _, g := range groups {
		slices.Sort(g)
	}
	slices.SortFunc(groups, func(a, b []int) int { return a[0] - b[0] })
	return groups
}

// refines reports whether every group of fine lies inside one group of
// coarse; both partition the same n elements.
func refines(fine, coarse [][]int, n int) bool {
	owner := make([]int, n)
	for g, grp := range coarse {
		for _, x := range grp {
			owner[x] = g
		}
	}
	for _, grp := range fine {
		for _, x := range grp[1:] {
			if owner[x] != owner[grp[0]] {
				return false
			}
		}
	}
	return true
}

// hostLevels builds the host-granular chain: host, switch, tree levels,
// truth levels, all. It fails when two truth levels cut across each other.
func (p *Platform) hostLevels() ([]hostLevel, error) {
	n := len(p.hosts)
	single := make([][]int, n)
	for h := range n {
		single[h] = []int{h}
	}
	chain := []hostLevel{{name: "host", groups: single}}
	chain = append(chain, p.treeLevels()...)
	for _, ts := range p.truthSpec {
		groups := make([][]int, len(ts.groups))
		for i, g := range ts.groups {
			groups[i] = slices.Clone(g)
		}
		t := hostLevel{name: ts.name, groups: canonical(groups), line: ts.line}
		// A stated level is authoritative: structural levels that cut
		// across it are dropped; two stated levels that cut across each
		// other are an error.
		kept := chain[:0:0]
		for _, l := range chain {
			if refines(l.groups, t.groups, n) || refines(t.groups, l.groups, n) {
				kept = append(kept, l)
			} else if l.line != 0 {
				return nil, fmt.Errorf("level %q (line %d) cuts across level %q (line %d): levels must nest", t.name, t.line, l.name, l.line)
			}
		}
		// Insert after the last level that t coarsens.
		at := 0
		for i, l := range kept {
			if refines(l.groups, t.groups, n) {
				at = i + 1
			}
		}
		chain = slices.Insert(kept, at, t)
	}
	all := make([]int, n)
	for h := range n {
		all[h] = h
	}
	return append(chain, hostLevel{name: "all", groups: [][]int{all}}), nil
}

// treeLevels cuts the routed switch tree. The tree is rooted at the switch
// whose farthest host-bearing switch is fewest hops away (ties: smaller
// worst latency, then name), and is the routing tree from that root: for a
// switch graph that is a tree this is the graph itself; for any other graph
// it is the set of routes from the root, which is how traffic from the
// centre actually flows. Switches without hosts below them are pruned. A
// switch's height is 0 without child switches, else one more than its
// highest child. Level "switch" groups hosts by their own switch; level k
// (k = 1..height of the root) groups every host under its highest
// ancestor-or-self switch of height <= k. The top level is the whole tree and
// becomes "all".
func (p *Platform) treeLevels() []hostLevel {
	nsw := len(p.switches)
	hasHosts := make([]bool, nsw)
	for _, h := range p.hosts {
		hasHosts[h.sw] = true
	}
	root, tree := p.treeRoot(hasHosts)
	parent := make([]int, nsw)
	for s := range nsw {
		parent[s] = -1
		if path := tree.nodes[s]; len(path) >= 2 {
			parent[s] = path[len(path)-2]
		}
	}
	// Prune: keep switches with hosts at or below them.
	keep := make([]bool, nsw)
	for s := range nsw {
		if hasHosts[s] {
			for x := s; x >= 0 && !keep[x]; x = parent[x] {
				keep[x] = true
			}
		}
	}
	height := make([]int, nsw)
	// Deepest first, so children are done before parents.
	order := make([]int, 0, nsw)
	for s := range nsw {
		if keep[s] {
			order = append(order, s)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return len(tree.nodes[b]) - len(tree.nodes[a]) })
	for _, s := range order {
		if s != root && parent[s] >= 0 {
			height[parent[s]] = max(height[parent[s]], height[s]+1)
		}
	}
	levelFor := func(k int, name string) hostLevel {
		groupOf := map[int]int{}
		var groups [][]int
		for h, host := range p.hosts {
			key := host.sw
			for x := host.sw; x >= 0 && height[x] <= k; x = parent[x] {
				key = x
			}
			g, ok := groupOf[key]
			if !ok {
				g = len(groups)
				groupOf[key] = g
				groups = append(groups, nil)
			}
			groups[g] = append(groups[g], h)
		}
		if name == "" {
			name = fmt.Sprintf("tree-%d", k)
		}
		return hostLevel{name: name, groups: canonical(groups)}
	}
	levels := []hostLevel{levelFor(0, "switch")}
	for k := 1; k <= height[root]; k++ {
		levels = append(levels, levelFor(k, ""))
	}
	return levels
}

// treeRoot picks the root of the routed tree (see treeLevels).
func (p *Platform) treeRoot(hasHosts []bool) (int, *spTree) {
	best, bestHops, bestLat := -1, 0, int64(0)
	var bestTree *spTree
	for s := range p.switches {
		t := p.routes.lockedTree(p, s)
		hops, lat := 0, int64(0)
		for x, ok := range hasHosts {
			if ok {
				hops = max(hops, t.hops[x])
				lat = max(lat, t.latPS[x])
			}
		}
		if best < 0 || hops < bestHops || (hops == bestHops && (lat < bestLat ||
			(lat == bestLat && p.switches[s] < p.switches[best]))) {
			best, bestHops, bestLat, bestTree = s, hops, lat, t
		}
	}
	return best, bestTree
}

func (c *routeCache) lockedTree(p *Platform, src int) *spTree {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tree(p, src)
}
