package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"netaware/topo"
)

// tnode is a node of the drawn tree: a switch (or group), a rank, or a box
// standing for all ranks of a collapsed subtree.
type tnode struct {
	id       string
	kind     nodeKind
	rank     int   // kindRank
	ranks    []int // every rank below (sorted)
	children []*tnode
	// Edge to the parent: one-way latency and bandwidth (NaN if unknown).
	// For a box, latMin..latMax is the path latency range from the box's
	// parent down to its ranks and bw the smallest bandwidth on those paths.
	lat, latMax, bw float64
	switches        int // inner nodes folded into a box
	// A box that absorbed its switch carries the switch's name and the
	// switch's uplink (upLat, upBW); its own lat..latMax, bw then describe
	// the paths from that switch down to the ranks.
	name        string
	upLat, upBW float64
	absorbed    bool
	column      bool    // children (all boxes) drawn as a vertical list
	colW        float64 // a column's box width (its widest text's)
	boxW        float64 // a box's drawn width
	x, y, w     float64
	depth       int
}

type nodeKind int

const (
	kindSwitch nodeKind = iota
	kindRank
	kindBox
)

// treeFromTopology roots the topology's tree at its centre (the inner node
// with the smallest eccentricity in hops, the first such node on ties), so
// that a symmetric hierarchy is drawn symmetric whichever node the file
// lists first.
func treeFromTopology(t *topo.Topology) (*tnode, error) {
	tr := t.Tree
	if tr == nil || len(tr.Nodes) == 0 {
		return nil, fmt.Errorf("topology has no tree")
	}
	if err := tr.Validate(t.Size); err != nil {
		return nil, err
	}
	idx := map[string]int{}
	for i, nd := range tr.Nodes {
		idx[nd.ID] = i
	}
	type adj struct {
		to      int
		lat, bw float64
	}
	nbr := make([][]adj, len(tr.Nodes))
	for _, e := range tr.Edges {
		a, b := idx[e.A], idx[e.B]
		bw := math.NaN()
		if e.Bandwidth != nil {
			bw = *e.Bandwidth
		}
		nbr[a] = append(nbr[a], adj{b, e.LatencyS, bw})
		nbr[b] = append(nbr[b], adj{a, e.LatencyS, bw})
	}
	bfs := func(src int) []int {
		dist := make([]int, len(tr.Nodes))
		for i := range dist {
			dist[i] = -1
		}
		dist[src] = 0
		q := []int{src}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			for _, a := range nbr[u] {
				if dist[a.to] < 0 {
					dist[a.to] = dist[u] + 1
					q = append(q, a.to)
				}
			}
		}
		return dist
	}
	// Ties on eccentricity go to the smaller sum of hop distances: the
	// node nearer the bulk of the tree draws more balanced.
	root, best, bestSum := 0, math.MaxInt, math.MaxInt
	for i, nd := range tr.Nodes {
		if nd.Rank != nil && len(tr.Nodes) > 1 {
			continue
		}
		dist := bfs(i)
		ecc, sum := slices.Max(dist), 0
		for _, d := range dist {
			sum += d
		}
		if ecc < best || ecc == best && sum < bestSum {
			root, best, bestSum = i, ecc, sum
		}
	}
	nodes := make([]*tnode, len(tr.Nodes))
	for i, nd := range tr.Nodes {
		n := &tnode{id: nd.ID, kind: kindSwitch, lat: math.NaN(), latMax: math.NaN(), bw: math.NaN()}
		if nd.Rank != nil {
			n.kind, n.rank = kindRank, *nd.Rank
		}
		nodes[i] = n
	}
	// Build parent links by BFS from the root; children in file order.
	seen := make([]bool, len(tr.Nodes))
	seen[root] = true
	q := []int{root}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, a := range nbr[u] {
			if seen[a.to] {
				continue
			}
			seen[a.to] = true
			c := nodes[a.to]
			c.lat, c.latMax, c.bw = a.lat, a.lat, a.bw
			nodes[u].children = append(nodes[u].children, c)
			q = append(q, a.to)
		}
	}
	r := nodes[root]
	finishTree(r, 0)
	return r, nil
}

// treeFromLevels draws the level hierarchy itself when the topology has no
// tree: the root is the whole world, below it the groups of each level, the
// ranks at the bottom. Nodes are named after their level.
func treeFromLevels(t *topo.Topology) *tnode {
	n := t.Size
	nan := math.NaN()
	mk := func(id string, ranks []int) *tnode {
		return &tnode{id: id, kind: kindSwitch, ranks: ranks, lat: nan, latMax: nan, bw: nan}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	root := mk("all", all)
	parents := []*tnode{root}
	for li := len(t.Levels) - 1; li >= 0; li-- {
		l := t.Levels[li]
		if len(l.Groups) <= 1 || len(l.Groups) >= n {
			continue
		}
		var next []*tnode
		gs := slices.Clone(l.Groups)
		slices.SortFunc(gs, func(a, b []int) int { return slices.Min(a) - slices.Min(b) })
		for gi, g := range gs {
			c := mk(fmt.Sprintf("%s %d", l.Name, gi), slices.Sorted(slices.Values(g)))
			for _, p := range parents {
				if slices.Contains(p.ranks, c.ranks[0]) {
					p.children = append(p.children, c)
					break
				}
			}
			next = append(next, c)
		}
		parents = next
	}
	for _, p := range parents {
		for _, r := range p.ranks {
			p.children = append(p.children, &tnode{id: fmt.Sprintf("r%d", r), kind: kindRank, rank: r, lat: nan, latMax: nan, bw: nan})
		}
	}
	finishTree(root, 0)
	return root
}

// finishTree fills depth and the ranks below every node.
func finishTree(nd *tnode, depth int) []int {
	nd.depth = depth
	if nd.kind == kindRank {
		nd.ranks = []int{nd.rank}
		return nd.ranks
	}
	if nd.kind == kindBox {
		return nd.ranks
	}
	var rs []int
	for _, c := range nd.children {
		rs = append(rs, finishTree(c, depth+1)...)
	}
	slices.Sort(rs)
	nd.ranks = rs
	return rs
}

// Drawing sizes, in SVG pixels.
const (
	slotRank   = 32.0 // width of a rank leaf
	slotBox    = 150.0
	slotSwitch = 70.0 // a childless switch
	colBoxW    = 180.0
	colRowH    = 44.0
	layerH     = 96.0
	treeMargin = 24.0
	// maxTreeWidth is the widest drawing we accept before collapsing more
	// of the tree into boxes: it is the report's content width (1180 px page
	// less paddings), so on a desktop screen text is
	// never scaled down.
	maxTreeWidth = 1080.0
	// expandLimit: with at most this many ranks every rank is drawn.
	expandLimit = 64
)

// collapse folds the subtree below nd into one box (a child of nd).
func collapse(nd *tnode) {
	nan := math.NaN()
	box := &tnode{id: "box-" + nd.id, kind: kindBox, ranks: nd.ranks, lat: math.Inf(1), latMax: math.Inf(-1), bw: math.Inf(1), upLat: nan, upBW: nan}
	var walk func(n *tnode, lat, bw float64)
	walk = func(n *tnode, lat, bw float64) {
		switch n.kind {
		case kindRank:
			box.lat, box.latMax = math.Min(box.lat, lat), math.Max(box.latMax, lat)
			if !math.IsNaN(bw) {
				box.bw = math.Min(box.bw, bw)
			}
		case kindBox:
			up := 0.0
			if n.absorbed {
				box.switches++
				up = n.upLat
				if !math.IsNaN(n.upBW) && (math.IsNaN(bw) || n.upBW < bw) {
					bw = n.upBW
				}
			}
			box.lat, box.latMax = math.Min(box.lat, lat+up+n.lat), math.Max(box.latMax, lat+up+n.latMax)
			box.switches += n.switches
			if !math.IsNaN(n.bw) {
				bw = math.Min(bw, n.bw)
			}
			if !math.IsNaN(bw) {
				box.bw = math.Min(box.bw, bw)
			}
		default:
			if n != nd {
				box.switches++
			}
			for _, c := range n.children {
				cbw := bw
				if c.kind != kindBox && !math.IsNaN(c.bw) && (math.IsNaN(bw) || c.bw < bw) {
					cbw = c.bw
				}
				clat := lat
				if c.kind != kindBox {
					clat += c.lat
				}
				walk(c, clat, cbw)
			}
		}
	}
	walk(nd, 0, math.NaN())
	if math.IsInf(box.lat, 1) || math.IsNaN(box.lat) {
		box.lat, box.latMax = nan, nan
	}
	if math.IsInf(box.bw, 1) {
		box.bw = nan
	}
	box.depth = nd.depth + 1
	nd.children = []*tnode{box}
}

// absorb turns a switch whose only child is a box into that box, named
// after the switch: "sw3 · 64 ranks" says the same with one node less.
func absorb(nd *tnode) {
	b := nd.children[0]
	*nd = tnode{id: nd.id, kind: kindBox, ranks: b.ranks, lat: b.lat, latMax: b.latMax, bw: b.bw,
		switches: b.switches, name: nd.id, upLat: nd.lat, upBW: nd.bw, absorbed: true, depth: nd.depth}
}

func hasRankChild(nd *tnode) bool {
	for _, c := range nd.children {
		if c.kind == kindRank {
			return true
		}
	}
	return false
}

// inner calls f on every switch below and including nd, children first.
func inner(nd *tnode, f func(*tnode)) {
	if nd.kind != kindSwitch {
		return
	}
	for _, c := range nd.children {
		inner(c, f)
	}
	f(nd)
}

// allBoxes reports whether nd is a switch with children that are all boxes.
func allBoxes(nd *tnode) bool {
	if nd.kind != kindSwitch || len(nd.children) == 0 {
		return false
	}
	for _, c := range nd.children {
		if c.kind != kindBox {
			return false
		}
	}
	return true
}

// foldRanks replaces the rank children of nd by one box (first among its
// children), keeping its switch children.
func foldRanks(nd *tnode) {
	nan := math.NaN()
	box := &tnode{id: "box-" + nd.id, kind: kindBox, lat: math.Inf(1), latMax: math.Inf(-1), bw: math.Inf(1), upLat: nan, upBW: nan, depth: nd.depth + 1}
	rest := []*tnode{box}
	for _, c := range nd.children {
		if c.kind != kindRank {
			rest = append(rest, c)
			continue
		}
		box.ranks = append(box.ranks, c.rank)
		if !math.IsNaN(c.lat) {
			box.lat, box.latMax = math.Min(box.lat, c.lat), math.Max(box.latMax, c.lat)
		}
		if !math.IsNaN(c.bw) {
			box.bw = math.Min(box.bw, c.bw)
		}
	}
	slices.Sort(box.ranks)
	if math.IsInf(box.lat, 1) {
		box.lat, box.latMax = nan, nan
	}
	if math.IsInf(box.bw, 1) {
		box.bw = nan
	}
	nd.children = rest
}

// frontier reports whether nd is a switch none of whose children is a
// switch.
func frontier(nd *tnode) bool {
	if nd.kind != kindSwitch || len(nd.children) == 0 {
		return false
	}
	for _, c := range nd.children {
		if c.kind == kindSwitch {
			return false
		}
	}
	return true
}

// simplify collapses the tree until it fits maxTreeWidth. For worlds above
// expandLimit ranks, the ranks hanging off each switch become one box and a
// switch left with a single box is merged into it; a switch whose children
// are all boxes lists them in a column. While the drawing is still too
// wide, the deepest switches with no switch below fold into one box each,
// and at last the root's own ranks.
func simplify(root *tnode) {
	tidy := func() {
		inner(root, func(nd *tnode) {
			if nd != root && len(nd.children) == 1 && nd.children[0].kind == kindBox {
				absorb(nd)
			}
		})
		inner(root, func(nd *tnode) { nd.column = allBoxes(nd) && len(nd.children) > 1 })
	}
	if len(root.ranks) > expandLimit {
		inner(root, func(nd *tnode) {
			if hasRankChild(nd) {
				foldRanks(nd)
			}
		})
		tidy()
	}
	for {
		w, _ := layout(root)
		if w <= maxTreeWidth {
			return
		}
		deepest := -1
		inner(root, func(nd *tnode) {
			if nd != root && frontier(nd) {
				deepest = max(deepest, nd.depth)
			}
		})
		switch {
		case deepest >= 0:
			inner(root, func(nd *tnode) {
				if nd != root && frontier(nd) && nd.depth == deepest {
					collapse(nd)
				}
			})
		case hasRankChild(root):
			foldRanks(root)
		case len(root.children) > 1:
			collapse(root)
		default:
			return
		}
		tidy()
	}
}

// layout assigns x (centre), y and returns the drawing's width and height.
func layout(root *tnode) (width, height float64) {
	next, maxY := treeMargin, 0.0
	var place func(n *tnode, depth int)
	place = func(n *tnode, depth int) {
		n.depth = depth
		n.y = treeMargin + 20 + float64(depth)*layerH
		maxY = math.Max(maxY, n.y+20)
		switch {
		case n.column:
			// Trunk under the switch, boxes to its right, one per row, as
			// wide as the widest text among them.
			n.x = next + 44
			withLink := sharedLabel(n) == ""
			n.colW = colBoxW
			for _, c := range n.children {
				n.colW = math.Max(n.colW, boxWidth(c, withLink))
			}
			for k, c := range n.children {
				c.depth, c.w, c.boxW = depth+1, 0, n.colW
				c.x = n.x + 14 + n.colW/2
				c.y = n.y + 58 + float64(k)*colRowH
				maxY = math.Max(maxY, c.y+22)
			}
			next += 44 + 14 + n.colW + 16
		case len(n.children) == 0:
			w := slotSwitch
			switch n.kind {
			case kindRank:
				w = slotRank
			case kindBox:
				w = math.Max(slotBox, boxWidth(n, false)+12)
				n.boxW = w - 12
			}
			n.w = w
			n.x = next + w/2
			next += w
		default:
			for _, c := range n.children {
				place(c, depth+1)
			}
			n.x = (n.children[0].x + n.children[len(n.children)-1].x) / 2
		}
	}
	place(root, 0)
	return next + treeMargin, maxY + treeMargin
}

// latLabel formats an edge's latency (a range for boxes).
func latLabel(lo, hi float64) string {
	if math.IsNaN(lo) {
		return ""
	}
	a, b := formatSeconds(lo), formatSeconds(hi)
	if math.IsNaN(hi) || hi <= lo*1.005 || a == b {
		return a
	}
	return a + "–" + b
}

// linkLabel is "10 µs · 1.25 GB/s", either part omitted when unknown.
func linkLabel(latLo, latHi, bw float64) string {
	var parts []string
	if s := latLabel(latLo, latHi); s != "" {
		parts = append(parts, s)
	}
	if !math.IsNaN(bw) {
		parts = append(parts, formatBandwidth(bw))
	}
	return strings.Join(parts, " · ")
}

// edgeOf is the label of the edge above c: its link, or for a box hanging
// off its own switch the path range down to its ranks.
func edgeOf(c *tnode) (lat, latMax, bw float64) {
	switch {
	case c.kind == kindBox && c.absorbed:
		return c.upLat, c.upLat, c.upBW
	case c.kind == kindBox:
		return c.lat, c.latMax, c.bw
	}
	return c.lat, c.lat, c.bw
}

// sharedLabel is the one label for the edges from n to its leaf children
// (ranks or boxes) when it has two or more: "each" and the range of their
// links ("" otherwise). One label per leaf would overlap at 30 pixels per
// rank, and measured links of one switch differ in the last digit.
// Switch children keep their own labels.
func sharedLabel(n *tnode) string {
	lo, hi := math.NaN(), math.NaN()
	bwLo, bwHi := math.NaN(), math.NaN()
	leaves := 0
	for _, c := range n.children {
		if c.kind == kindSwitch {
			continue
		}
		leaves++
		l, m, b := edgeOf(c)
		lo, hi = nanMin(lo, l), nanMax(hi, m)
		bwLo, bwHi = nanMin(bwLo, b), nanMax(bwHi, b)
	}
	if leaves < 2 {
		return ""
	}
	var parts []string
	if s := latLabel(lo, hi); s != "" {
		parts = append(parts, s)
	}
	if b := formatBandwidth(bwLo); !math.IsNaN(bwLo) {
		if hb := formatBandwidth(bwHi); hb != b {
			b += "–" + hb
		}
		parts = append(parts, b)
	}
	if len(parts) == 0 {
		return ""
	}
	return "each " + strings.Join(parts, " · ")
}

// nanMin and nanMax ignore NaN operands (unknown values).
func nanMin(a, b float64) float64 {
	if math.IsNaN(a) || b < a {
		return b
	}
	return a
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}

// treeSVG draws the tree. tooltip describes a rank (host hints).
func treeSVG(root *tnode, tooltip func(rank int) string) []byte {
	simplify(root)
	width, height := layout(root)
	var b bytes.Buffer
	style := `<style>.e{stroke:#8a99ad;stroke-width:1.4;fill:none}.el{font-size:10px;fill:#33445c;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.sw{fill:#1f3a5f}.swt{fill:#fff;font-size:11px;font-weight:600}.rk{fill:#e8f0fa;stroke:#1f3a5f;stroke-width:1.2}.rkt{fill:#1f3a5f;font-size:10px}.bx{fill:#fdf3e1;stroke:#c98a1b;stroke-width:1.2}.bxt{fill:#5c3d05;font-size:11px}.bxs{fill:#7a5a20;font-size:9.5px}</style>` + "\n"
	var edges, nodes bytes.Buffer
	label := func(x, y float64, anchor, s string) {
		if s != "" {
			// The drawing grows to hold every label: a switch's "each
			// ..." label starts at its trunk and may reach past the
			// last child.
			right := x + textWidth(s, fontEdge)
			if anchor == "middle" {
				right = x + textWidth(s, fontEdge)/2
			}
			width = math.Max(width, right+treeMargin/2)
			fmt.Fprintf(&edges, `<text class="el" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`+"\n", x, y, anchor, html.EscapeString(s))
		}
	}
	inColumn := map[*tnode]bool{} // drawn by their parent, with their link
	var walk func(n *tnode)
	walk = func(n *tnode) {
		shared := sharedLabel(n)
		if n.column && shared == "" {
			for _, c := range n.children {
				inColumn[c] = true
			}
		}
		if n.column && len(n.children) > 0 {
			last := n.children[len(n.children)-1]
			fmt.Fprintf(&edges, `<path class="e" d="M%.1f %.1fV%.1f"/>`+"\n", n.x, n.y+12, last.y)
			label(n.x+6, n.y+30, "start", shared)
		} else if shared != "" {
			label(n.x+6, (n.y+n.children[0].y)/2-5, "start", shared)
		}
		for _, c := range n.children {
			if n.column {
				fmt.Fprintf(&edges, `<path class="e" d="M%.1f %.1fH%.1f"/>`+"\n", n.x, c.y, c.x-c.boxW/2)
			} else {
				midY := (n.y + c.y) / 2
				// Orthogonal elbow edges: down from the parent, along a bus,
				// down into the child, as network diagrams are drawn.
				fmt.Fprintf(&edges, `<path class="e" d="M%.1f %.1fV%.1fH%.1fV%.1f"/>`+"\n", n.x, n.y+12, midY, c.x, c.y-14)
				if shared == "" || c.kind == kindSwitch {
					l, m, bw := edgeOf(c)
					label(c.x, midY+13, "middle", latLabel(l, m))
					if !math.IsNaN(bw) {
						label(c.x, midY+24, "middle", formatBandwidth(bw))
					}
				}
			}
			walk(c)
		}
		for _, c := range n.children {
			if n.column && shared == "" {
				// No room on the stub: the link goes into the box.
				drawNode(&nodes, c, tooltip, true)
			}
		}
		if !inColumn[n] {
			drawNode(&nodes, n, tooltip, false)
		}
	}
	walk(root)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="tree" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="topology tree" font-family="Helvetica, Arial, sans-serif">`+"\n", width, height, width, height)
	b.WriteString(style)
	b.Write(edges.Bytes())
	b.Write(nodes.Bytes())
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// drawNode draws one node; withLink puts the link to the parent into a
// box's text (for boxes listed in a column with different links).
func drawNode(w *bytes.Buffer, n *tnode, tooltip func(int) string, withLink bool) {
	switch n.kind {
	case kindSwitch:
		wd := math.Max(44, 8+7*float64(len([]rune(n.id))))
		fmt.Fprintf(w, `<g><title>%s: %d ranks (%s)</title><rect class="sw" x="%.1f" y="%.1f" width="%.1f" height="24" rx="5"/><text class="swt" x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>`+"\n",
			html.EscapeString(n.id), len(n.ranks), html.EscapeString(shorten(topo.FormatRanks(n.ranks), 200)), n.x-wd/2, n.y-12, wd, n.x, n.y+4, html.EscapeString(n.id))
	case kindRank:
		fmt.Fprintf(w, `<g><title>%s</title><circle class="rk" cx="%.1f" cy="%.1f" r="12"/><text class="rkt" x="%.1f" y="%.1f" text-anchor="middle">%d</text></g>`+"\n",
			html.EscapeString(tooltip(n.rank)), n.x, n.y, n.x, n.y+3.5, n.rank)
	case kindBox:
		bw := n.boxW
		title, sub := boxLabels(n, withLink)
		fmt.Fprintf(w, `<g><title>ranks %s</title><rect class="bx" x="%.1f" y="%.1f" width="%.1f" height="34" rx="6"/><text class="bxt" x="%.1f" y="%.1f" text-anchor="middle">%s</text><text class="bxs" x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>`+"\n",
			html.EscapeString(shorten(topo.FormatRanks(n.ranks), 200)), n.x-bw/2, n.y-14, bw, n.x, n.y, html.EscapeString(title), n.x, n.y+13, html.EscapeString(sub))
	}
}

// boxLabels are a box's two lines: its name and size, then its ranks, and
// (absorbed, or withLink: listed in a column whose links differ) its link.
func boxLabels(n *tnode, withLink bool) (title, sub string) {
	title = fmt.Sprintf("%d ranks", len(n.ranks))
	if n.name != "" {
		title = n.name + " · " + title
	}
	sub = rangeLabel(n.ranks)
	if n.absorbed || withLink {
		if s := linkLabel(n.lat, n.latMax, n.bw); s != "" {
			sub += " · " + s
		}
	}
	if n.absorbed && withLink {
		if s := linkLabel(n.upLat, n.upLat, n.upBW); s != "" {
			title += " · ↑" + s
		}
	}
	if n.switches > 0 {
		sub += fmt.Sprintf(" · %d sw", n.switches)
	}
	return title, sub
}

// Font sizes of the tree's texts, in SVG pixels (the style sheet's).
const (
	fontEdge  = 10.0
	fontTitle = 11.0
	fontSmall = 9.5
)

// textWidth estimates the drawn width of s at font size px. The SVG is
// laid out without a font engine, so boxes and the drawing's extent go by
// Helvetica's advance widths (in em) for the glyphs labels use, 15% wider
// for the fonts that stand in for it (DejaVu Sans, 10% wider) and a margin.
func textWidth(s string, px float64) float64 {
	em := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune(" .,·/:il|j'", r):
			em += 0.25
		case strings.ContainsRune("ft-r()[]", r):
			em += 0.32
		case strings.ContainsRune("kscvxyz", r):
			em += 0.5
		case r == 'm' || r == 'M':
			em += 0.833
		case r == 'w' || r == 'W':
			em += 0.9
		case r >= 'A' && r <= 'Z':
			em += 0.667
		default: // digits, most lower-case letters, µ, –, ↑, ×
			em += 0.556
		}
	}
	return 1.15 * em * px
}

// boxWidth is the width a box needs for its two lines, padding included.
func boxWidth(n *tnode, withLink bool) float64 {
	title, sub := boxLabels(n, withLink)
	return math.Max(textWidth(title, fontTitle), textWidth(sub, fontSmall)) + 16
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// rangeLabel is "r0-r63" for a contiguous run, else the compact list
// shortened to fit a box.
func rangeLabel(ranks []int) string {
	if len(ranks) == 0 {
		return ""
	}
	if ranks[len(ranks)-1]-ranks[0] == len(ranks)-1 {
		return fmt.Sprintf("r%d-r%d", ranks[0], ranks[len(ranks)-1])
	}
	return shorten(topo.FormatRanks(ranks), 22)
}
