package topo

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"netaware/units"
)

// WriteDOT writes the topology for Graphviz. With a tree, the tree itself:
// rank nodes as ellipses labelled with rank and host, switches as boxes,
// edges labelled with latency and, when known, bandwidth. Without a tree,
// the levels as nested clusters (subgraph cluster_...), ranks inside.
// Render with: dot -Tsvg topology.dot -o topology.svg (use sfdp for
// thousands of ranks).
func (t *Topology) WriteDOT(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("graph topology {\n  graph [rankdir=TB, fontname=\"Helvetica\"];\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n")
	if t.Tree != nil {
		for _, n := range t.Tree.Nodes {
			if n.Rank != nil {
				fmt.Fprintf(&b, "  %s [shape=ellipse, label=%s];\n", dotID(n.ID), dotID(t.rankLabel(*n.Rank)))
			} else {
				fmt.Fprintf(&b, "  %s [shape=box, style=filled, fillcolor=\"#dde6f0\"];\n", dotID(n.ID))
			}
		}
		for _, e := range t.Tree.Edges {
			label := FormatSeconds(e.LatencyS)
			if e.Bandwidth != nil {
				label += "\n" + FormatBandwidth(*e.Bandwidth)
			}
			fmt.Fprintf(&b, "  %s -- %s [label=%s];\n", dotID(e.A), dotID(e.B), dotID(label))
		}
	} else {
		t.writeDOTClusters(&b)
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

func (t *Topology) rankLabel(r int) string {
	if h := t.Ranks[r].Host; h != "" {
		return fmt.Sprintf("%d\n%s", r, h)
	}
	return strconv.Itoa(r)
}

// writeDOTClusters nests one cluster per group above single ranks.
func (t *Topology) writeDOTClusters(b *bytes.Buffer) {
	singles := make([][]int, t.Size)
	for r := range singles {
		singles[r] = []int{r}
	}
	chain := coarserChain(singles, t.Levels, t.Size)
	root := nestFromLevels(singles, chain, t.Size, true)
	// Label each nest with the finest level whose group it is.
	name := map[string]string{}
	for _, l := range chain {
		for gi, g := range l.Groups {
			k := FormatRanks(g)
			if _, ok := name[k]; !ok {
				name[k] = fmt.Sprintf("%s %d", l.Name, gi)
			}
		}
	}
	id := 0
	var emit func(n *nest, depth int)
	emit = func(n *nest, depth int) {
		ind := strings.Repeat("  ", depth)
		if len(n.kids) == 0 {
			r := n.ranks[0]
			fmt.Fprintf(b, "%sr%d [shape=ellipse, label=%s];\n", ind, r, dotID(t.rankLabel(r)))
			return
		}
		ranks := n.allRanks()
		label := name[FormatRanks(sortedCopy(ranks))]
		if label == "" {
			label = "all"
		}
		fmt.Fprintf(b, "%ssubgraph cluster_%d {\n%s  label=%s;\n", ind, id, ind, dotID(fmt.Sprintf("%s (%d ranks)", label, len(ranks))))
		id++
		for _, k := range n.kids {
			emit(k, depth+1)
		}
		fmt.Fprintf(b, "%s}\n", ind)
	}
	emit(root, 1)
}

func sortedCopy(a []int) []int { return slices.Sorted(slices.Values(a)) }

// dotID quotes a string as a DOT ID.
func dotID(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// FormatSeconds is units.FormatTime: every table and label prints times
// one way.
func FormatSeconds(s float64) string { return units.FormatTime(s) }

// FormatBandwidth is units.FormatBandwidth (bits per second, as links are
// sold: 1.25e8 B/s -> 1Gbps).
func FormatBandwidth(bps float64) string { return units.FormatBandwidth(bps) }
