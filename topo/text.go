package topo

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteText writes a summary and an indented tree for people ('netaware
// topo show'): the levels with their group counts and sizes, then the
// groups nested from coarsest to finest with rank ranges and host names,
// then, when there is one, the inferred tree with edge latencies.
func (t *Topology) WriteText(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	var b bytes.Buffer
	hostSet := map[string]bool{}
	for _, r := range t.Ranks {
		if r.Host != "" {
			hostSet[r.Host] = true
		}
	}
	fmt.Fprintf(&b, "%d ranks", t.Size)
	if len(hostSet) > 0 {
		fmt.Fprintf(&b, " on %d hosts", len(hostSet))
	}
	fmt.Fprintf(&b, ", %d levels", len(t.Levels))
	if t.Tree != nil {
		sw := 0
		for _, n := range t.Tree.Nodes {
			if n.Rank == nil {
				sw++
			}
		}
		fmt.Fprintf(&b, ", tree with %d switches", sw)
	}
	b.WriteString("\n")
	if m := t.Method; m != nil {
		fmt.Fprintf(&b, "method: %s", m.Name)
		if len(m.Params) > 0 {
			keys := make([]string, 0, len(m.Params))
			for k := range m.Params {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, fmt.Sprintf("%s=%v", k, m.Params[k]))
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(kv, ", "))
		}
		b.WriteString("\n")
	}
	if m := t.Measurements; m != nil {
		fmt.Fprintf(&b, "measured %d of %d pairs", m.PairsMeasured, m.PairsTotal)
		if m.VirtualTimeS > 0 {
			fmt.Fprintf(&b, ", %s virtual time", FormatSeconds(m.VirtualTimeS))
		}
		if m.WallTimeS > 0 {
			fmt.Fprintf(&b, ", %s wall time", FormatSeconds(m.WallTimeS))
		}
		b.WriteString("\n")
	}
	if len(t.Levels) > 0 {
		b.WriteString("\nlevels (finest first):\n")
		width := 5
		for _, l := range t.Levels {
			width = max(width, len(l.Name))
		}
		for _, l := range t.Levels {
			lo, hi := t.Size, 0
			for _, g := range l.Groups {
				lo, hi = min(lo, len(g)), max(hi, len(g))
			}
			sizes := fmt.Sprintf("size %d", lo)
			if lo != hi {
				sizes = fmt.Sprintf("sizes %d-%d, mean %.1f", lo, hi, float64(t.Size)/float64(len(l.Groups)))
			}
			fmt.Fprintf(&b, "  %-*s %5d %-6s %s\n", width, l.Name, len(l.Groups), plural(len(l.Groups), "group"), sizes)
		}
		t.writeGroupTree(&b)
	}
	if t.Tree != nil {
		t.writeEdgeTree(&b)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// writeGroupTree prints each distinct level's groups nested in the coarser
// ones, leaving out single ranks (listed in their parent's line instead).
func (t *Topology) writeGroupTree(b *bytes.Buffer) {
	singles := make([][]int, t.Size)
	for r := range singles {
		singles[r] = []int{r}
	}
	chain := coarserChain(singles, t.Levels, t.Size)
	if len(chain) == 0 {
		return
	}
	b.WriteString("\ngroups:\n")
	name := map[string]string{}
	for li := len(chain) - 1; li >= 0; li-- {
		l := chain[li]
		for gi, g := range l.Groups {
			name[FormatRanks(g)] = fmt.Sprintf("%s %d", l.Name, gi)
		}
	}
	root := nestFromLevels(singles, chain, t.Size, true)
	var emit func(n *nest, depth int)
	emit = func(n *nest, depth int) {
		ranks := sortedCopy(n.allRanks())
		label := name[FormatRanks(ranks)]
		if label == "" {
			label = "all"
		}
		var hosts []string
		for _, r := range ranks {
			if h := t.Ranks[r].Host; h != "" {
				hosts = append(hosts, h)
			}
		}
		fmt.Fprintf(b, "%s%s: %d %s %s", strings.Repeat("  ", depth+1), label, len(ranks), plural(len(ranks), "rank"), FormatRanks(ranks))
		if len(hosts) > 0 {
			fmt.Fprintf(b, " on %s", CompressHostlist(hosts))
		}
		b.WriteString("\n")
		for _, k := range n.kids {
			if len(k.kids) > 0 {
				emit(k, depth+1)
			}
		}
	}
	emit(root, 0)
}

// writeEdgeTree prints the inferred tree rooted at its center (the node
// whose farthest leaf is nearest, in hops), children by lowest rank below.
func (t *Topology) writeEdgeTree(b *bytes.Buffer) {
	tr := t.Tree
	n := len(tr.Nodes)
	idx := make(map[string]int, n)
	for i, nd := range tr.Nodes {
		idx[nd.ID] = i
	}
	type half struct {
		to int
		e  Edge
	}
	adj := make([][]half, n)
	for _, e := range tr.Edges {
		a, c := idx[e.A], idx[e.B]
		adj[a] = append(adj[a], half{c, e})
		adj[c] = append(adj[c], half{a, e})
	}
	bfs := func(src int) []int {
		d := make([]int, n)
		for i := range d {
			d[i] = -1
		}
		d[src] = 0
		q := []int{src}
		for len(q) > 0 {
			v := q[0]
			q = q[1:]
			for _, h := range adj[v] {
				if d[h.to] < 0 {
					d[h.to] = d[v] + 1
					q = append(q, h.to)
				}
			}
		}
		return d
	}
	// Center: walk the diameter path from one end to its middle.
	far := func(d []int) int {
		best := 0
		for i := range d {
			if d[i] > d[best] {
				best = i
			}
		}
		return best
	}
	u := far(bfs(0))
	du := bfs(u)
	v := far(du)
	dv := bfs(v)
	center := 0
	bestEcc := n + 1
	for i := range du {
		if e := max(du[i], dv[i]); e < bestEcc {
			center, bestEcc = i, e
		}
	}
	low := make([]int, n) // lowest rank below each node, for ordering
	var lowest func(v, from int) int
	lowest = func(v, from int) int {
		m := 1 << 62
		if r := tr.Nodes[v].Rank; r != nil {
			m = *r
		}
		for _, h := range adj[v] {
			if h.to != from {
				m = min(m, lowest(h.to, v))
			}
		}
		low[v] = m
		return m
	}
	lowest(center, -1)
	b.WriteString("\ntree (rooted at its center; edge latency one-way):\n")
	var emit func(v, from, depth int, via *Edge)
	emit = func(v, from, depth int, via *Edge) {
		nd := tr.Nodes[v]
		line := strings.Repeat("  ", depth+1) + nd.ID
		if nd.Rank != nil {
			line += fmt.Sprintf(" rank %d", *nd.Rank)
			if h := t.Ranks[*nd.Rank].Host; h != "" {
				line += " on " + h
			}
		}
		if via != nil {
			line += "  [" + FormatSeconds(via.LatencyS)
			if via.Bandwidth != nil {
				line += ", " + FormatBandwidth(*via.Bandwidth)
			}
			line += "]"
		}
		b.WriteString(line + "\n")
		kids := make([]half, 0, len(adj[v]))
		for _, h := range adj[v] {
			if h.to != from {
				kids = append(kids, h)
			}
		}
		sort.Slice(kids, func(i, j int) bool { return low[kids[i].to] < low[kids[j].to] })
		for _, h := range kids {
			e := h.e
			emit(h.to, v, depth+1, &e)
		}
	}
	emit(center, -1, 0, nil)
}
