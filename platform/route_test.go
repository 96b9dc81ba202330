package platform

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// scanTree is Dijkstra with the least label found by scanning every
// switch, the definition shortestTree's heap must reproduce.
func scanTree(p *Platform, src int) *spTree {
	n := len(p.switches)
	rank := p.switchNameRanks()
	t := &spTree{latPS: make([]int64, n), hops: make([]int, n), nodes: make([][]int, n), links: make([][]int, n)}
	have, done := make([]bool, n), make([]bool, n)
	have[src] = true
	t.nodes[src], t.links[src] = []int{src}, []int{}
	for {
		u := -1
		for v := range n {
			if have[v] && !done[v] && (u < 0 || labelLess(rank, t.latPS[v], t.hops[v], t.nodes[v], t.latPS[u], t.hops[u], t.nodes[u])) {
				u = v
			}
		}
		if u < 0 {
			return t
		}
		done[u] = true
		for _, e := range p.adj[u] {
			if done[e.to] {
				continue
			}
			lat, hops := t.latPS[u]+picoseconds(p.links[e.link].LatencyS), t.hops[u]+1
			path := append(slices.Clone(t.nodes[u]), e.to)
			if !have[e.to] || labelLess(rank, lat, hops, path, t.latPS[e.to], t.hops[e.to], t.nodes[e.to]) {
				have[e.to] = true
				t.latPS[e.to], t.hops[e.to], t.nodes[e.to] = lat, hops, path
				t.links[e.to] = append(slices.Clone(t.links[u]), e.link)
			}
		}
	}
}

// TestShortestTreeMatchesScan: on seeded random switch graphs with many
// equal latencies (so that hop counts and names decide), the heap-ordered
// shortestTree gives every switch the route the scanning Dijkstra gives.
func TestShortestTreeMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 5))
	for trial := range 40 {
		n := 2 + rng.IntN(14)
		var src strings.Builder
		src.WriteString(tieHeader + "switches: [")
		names := rng.Perm(n)
		for i := range n {
			if i > 0 {
				src.WriteString(", ")
			}
			fmt.Fprintf(&src, "s%02d", names[i])
		}
		src.WriteString("]\nlinks:\n")
		linked := map[[2]int]bool{}
		link := func(a, b int) {
			if linked[[2]int{min(a, b), max(a, b)}] {
				return // one link per pair of switches
			}
			linked[[2]int{min(a, b), max(a, b)}] = true
			fmt.Fprintf(&src, "  - {between: [s%02d, s%02d], bandwidth: 1Gbps, latency: %dus}\n", names[a], names[b], 1+rng.IntN(3))
		}
		for i := 1; i < n; i++ {
			link(rng.IntN(i), i) // connected
		}
		for range rng.IntN(2 * n) {
			if a, b := rng.IntN(n), rng.IntN(n); a != b {
				link(a, b)
			}
		}
		fmt.Fprintf(&src, "hosts:\n  - {names: h, switch: s%02d, link: {bandwidth: 1Gbps, latency: 1us}}\n", names[0])
		p := mustParse(t, fmt.Sprintf("random-%d.yaml", trial), src.String())
		for s := range n {
			got, want := p.shortestTree(s), scanTree(p, s)
			for v := range n {
				if got.latPS[v] != want.latPS[v] || got.hops[v] != want.hops[v] || !slices.Equal(got.nodes[v], want.nodes[v]) || !slices.Equal(got.links[v], want.links[v]) {
					t.Fatalf("trial %d, from %s to %s: heap %v via links %v, scan %v via links %v\n%s", trial,
						p.switches[s], p.switches[v], got.nodes[v], got.links[v], want.nodes[v], want.links[v], src.String())
				}
			}
		}
	}
}
