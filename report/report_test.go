package report

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"netaware/cluster"
	"netaware/dataset"
	"netaware/model"
	"netaware/topo"
)

// TestDendrogramLayoutByHand: four points merged as ((0,1),(2,3)).
func TestDendrogramLayoutByHand(t *testing.T) {
	d := &cluster.Dendrogram{N: 4, Merges: []cluster.Merge{
		{A: 0, B: 1, Height: 1, Size: 2},
		{A: 2, B: 3, Height: 2, Size: 2},
		{A: 4, B: 5, Height: 5, Size: 4},
	}}
	order, links, err := DendrogramLayout(d)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int{0, 1, 2, 3}) {
		t.Errorf("order %v, want [0 1 2 3]", order)
	}
	want := []ULink{
		{XA: 0, YA: 0, XB: 1, YB: 0, Height: 1, Merge: 0},
		{XA: 2, YA: 0, XB: 3, YB: 0, Height: 2, Merge: 1},
		{XA: 0.5, YA: 1, XB: 2.5, YB: 2, Height: 5, Merge: 2},
	}
	if !slices.Equal(links, want) {
		t.Errorf("links\n got %+v\nwant %+v", links, want)
	}
}

// TestDendrogramLayoutProperties: on random matrices the layout has n-1 U
// links at the merge heights, legs standing on the children's heights and
// positions, and leaves in a permutation.
func TestDendrogramLayoutProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		n := 2 + rng.IntN(60)
		m := cluster.NewMatrix(n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				m.Set(i, j, 0.1+rng.Float64())
			}
		}
		link := []cluster.Linkage{cluster.SingleLinkage, cluster.AverageLinkage, cluster.CompleteLinkage}[trial%3]
		d, err := cluster.Agglomerative(m, link)
		if err != nil {
			t.Fatal(err)
		}
		order, links, err := DendrogramLayout(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(links) != n-1 {
			t.Fatalf("n=%d: %d links, want %d", n, len(links), n-1)
		}
		if s := slices.Sorted(slices.Values(order)); len(s) != n || s[0] != 0 || s[n-1] != n-1 || len(slices.Compact(s)) != n {
			t.Fatalf("order %v is not a permutation of 0..%d", order, n-1)
		}
		x := make([]float64, 2*n-1)
		y := make([]float64, 2*n-1)
		for k, p := range order {
			x[p] = float64(k)
		}
		for i, mg := range d.Merges {
			l := links[i]
			if l.Height != mg.Height || l.Merge != i {
				t.Fatalf("link %d height %g, want merge height %g", i, l.Height, mg.Height)
			}
			xa, xb, ya, yb := x[mg.A], x[mg.B], y[mg.A], y[mg.B]
			if xa > xb {
				xa, xb, ya, yb = xb, xa, yb, ya
			}
			if l.XA != xa || l.XB != xb || l.YA != ya || l.YB != yb {
				t.Fatalf("link %d legs (%g,%g)-(%g,%g), want (%g,%g)-(%g,%g)", i, l.XA, l.YA, l.XB, l.YB, xa, ya, xb, yb)
			}
			x[n+i], y[n+i] = (xa+xb)/2, mg.Height
		}
	}
}

// TestCutLinesBetweenBands: the cut lines of the fixture sit in the gaps
// between merge-height bands and carry the names of the found levels.
func TestCutLinesBetweenBands(t *testing.T) {
	in := fixture{sites: 2, switches: 2, ranksPer: 8, noise: 0.05, seed: 1}.input()
	dist, err := DistanceFromDataset(in.Dataset, in.Topology)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HierarchyOf(dist.M, cluster.AverageLinkage)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{4: "switch", 2: "site"}
	cuts, err := cutLines(h.Dendrogram, h.Cuts, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(cuts) != 2 || cuts[0].Label != "switch (4 groups)" || cuts[1].Label != "site (2 groups)" {
		t.Fatalf("cuts %+v", cuts)
	}
	// Switch pairs have RTT 40-42 µs, site pairs 240-252 µs, the rest 4.24-4.45 ms.
	if !(cuts[0].Height > 42e-6 && cuts[0].Height < 240e-6) || !(cuts[1].Height > 252e-6 && cuts[1].Height < 4.24e-3) {
		t.Errorf("cut heights %g, %g are not in the gaps", cuts[0].Height, cuts[1].Height)
	}
}

// TestHierarchyOrderContiguous: for random nested partitions with ranks
// scattered (cyclic placement), every group of every level is a contiguous
// run of the order.
func TestHierarchyOrderContiguous(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 30; trial++ {
		n := 4 + rng.IntN(100)
		perm := rng.Perm(n)
		// Fine level: random contiguous cuts of perm; coarse: merges of
		// consecutive fine groups.
		var fine [][]int
		for i := 0; i < n; {
			k := 1 + rng.IntN(6)
			fine = append(fine, slices.Sorted(slices.Values(perm[i:min(n, i+k)])))
			i += k
		}
		var coarse [][]int
		for i := 0; i < len(fine); {
			k := 1 + rng.IntN(3)
			var g []int
			for _, f := range fine[i:min(len(fine), i+k)] {
				g = append(g, f...)
			}
			coarse = append(coarse, slices.Sorted(slices.Values(g)))
			i += k
		}
		levels := []topo.Level{{Name: "fine", Groups: fine}, {Name: "coarse", Groups: coarse}}
		order := HierarchyOrder(levels, n)
		pos := make([]int, n)
		for k, r := range order {
			pos[r] = k
		}
		for _, l := range levels {
			for _, g := range l.Groups {
				lo, hi := n, -1
				for _, r := range g {
					lo, hi = min(lo, pos[r]), max(hi, pos[r])
				}
				if hi-lo+1 != len(g) {
					t.Fatalf("trial %d: %s group %v spans positions %d..%d", trial, l.Name, g, lo, hi)
				}
			}
		}
	}
}

// TestHierarchyOrderCyclic: ranks placed cyclically on two hosts come out
// host by host, and the level boundary falls between them.
func TestHierarchyOrderCyclic(t *testing.T) {
	levels := []topo.Level{{Name: "host", Groups: [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}}}, {Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}}}
	order := HierarchyOrder(levels, 8)
	if !slices.Equal(order, []int{0, 2, 4, 6, 1, 3, 5, 7}) {
		t.Fatalf("order %v", order)
	}
	if b := levelBoundaries(levels[0], order); !slices.Equal(b, []int{4}) {
		t.Errorf("boundaries %v, want [4]", b)
	}
}

// small8 is the hand-made input of the section tests: 8 ranks, 2 hosts of
// 4 (levels host, all), RTT 20 µs inside a host and 2 ms across, bandwidth
// 1 GB/s inside and 100 MB/s across, no tree.
func small8() Input {
	n := 8
	t := &topo.Topology{Version: topo.Version, Size: n,
		Levels: []topo.Level{
			{Name: "host", Groups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}},
			{Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}},
		},
		Method:       &topo.Method{Name: "agglomerative", Params: map[string]any{"linkage": "average"}},
		Measurements: &topo.Measurements{PairsMeasured: 28, PairsTotal: 28, VirtualTimeS: 0.5, WallTimeS: 2},
	}
	for r := 0; r < n; r++ {
		t.Ranks = append(t.Ranks, topo.Rank{Rank: r, Host: fmt.Sprintf("n%d", r/4)})
	}
	ds := &dataset.Dataset{Version: dataset.Version, World: dataset.World{Kind: "sim", Platform: "small8", Size: n}}
	ds.RTT = &dataset.RTTSection{PairsTotal: 28, Complete: true, ClockS: 0.4, Runs: 1}
	ds.Bandwidth = &dataset.BandwidthSection{PairsTotal: 28, Complete: true, ClockS: 0.1, Runs: 1}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			rtt, bw := 20e-6, 1e9
			if a/4 != b/4 {
				rtt, bw = 2e-3, 1e8
			}
			ds.RTT.Pairs = append(ds.RTT.Pairs, dataset.PairResult[dataset.RTTResult]{A: a, B: b, Result: dataset.RTTResult{MinS: rtt}})
			ds.Bandwidth.Pairs = append(ds.Bandwidth.Pairs, dataset.PairResult[dataset.BandwidthResult]{A: a, B: b, Result: dataset.BandwidthResult{BandwidthBps: bw}})
		}
	}
	return Input{Title: "small8", Date: "2026-11-21", Topology: t, Dataset: ds, Truth: t.Levels, TruthName: "small8"}
}

func TestLevelStatsByHand(t *testing.T) {
	in := small8()
	st := levelStats(in.Topology.Levels, 8, rttPairs(in.Dataset), bandwidthPairs(in.Dataset))
	host := st[0]
	if host.Groups != 2 || host.SizeMin != 4 || host.SizeMedian != 4 || host.SizeMax != 4 {
		t.Errorf("host sizes %+v", host)
	}
	if host.RTTWithin != 20e-6 || host.RTTBetween != 2e-3 || host.BWWithin != 1e9 || host.BWBetween != 1e8 {
		t.Errorf("host medians %+v", host)
	}
	if host.PairsWithin != 12 || host.PairsBetween != 16 {
		t.Errorf("host pairs %d within, %d between; want 12, 16", host.PairsWithin, host.PairsBetween)
	}
	all := st[1]
	// 12 pairs at 20 µs, 16 at 2 ms: the median is 2 ms.
	if all.RTTWithin != 2e-3 || !math.IsNaN(all.RTTBetween) {
		t.Errorf("all %+v", all)
	}
}

// sectionText returns the text of the element with the given id, found by
// a lenient XML parse of the whole page (html.Parse is not available).
func parsePage(t *testing.T, page []byte) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	sections := map[string]string{}
	var cur string
	depth := 0
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if tk.Name.Local == "section" {
				for _, a := range tk.Attr {
					if a.Name.Local == "id" {
						cur, depth = a.Value, 0
						text.Reset()
					}
				}
			}
			if cur != "" {
				depth++
			}
		case xml.EndElement:
			if cur != "" {
				depth--
				if depth == 0 {
					sections[cur] = text.String()
					cur = ""
				}
			}
		case xml.CharData:
			if cur != "" {
				text.Write(tk)
				text.WriteByte(' ')
			}
		}
	}
	return sections
}

// TestBuildSmall8Sections: every section is there with the numbers of the
// hand-made input.
func TestBuildSmall8Sections(t *testing.T) {
	out, err := Build(small8())
	if err != nil {
		t.Fatal(err)
	}
	sec := parsePage(t, out.HTML)
	want := map[string][]string{
		"summary":    {"8 ranks", "sim · platform small8", "host (2) → all (1)", "minimum RTT", "2026-11-21"},
		"tree":       {"host 0", "host 1"},
		"levels":     {"host", "4 / 4 / 4", "20us", "2ms", "100.00×", "8Gbps", "800Mbps"},
		"heatmap":    {"minimum RTT", "logarithmic", "20us to 2ms"},
		"dendrogram": {"average linkage", "host (2 groups)"},
		"cost":       {"RTT ping-pong", "28", "400ms", "100ms", "500ms", "2s"},
		"accuracy":   {"host", "1.000", "100.0 %"},
	}
	for id, needles := range want {
		text, ok := sec[id]
		if !ok {
			t.Errorf("section %q missing", id)
			continue
		}
		norm := strings.Join(strings.Fields(text), " ")
		for _, s := range needles {
			if !strings.Contains(norm, s) {
				t.Errorf("section %q lacks %q:\n%s", id, s, norm)
			}
		}
	}
	for _, f := range []string{"tree.svg", "heatmap.png", "heatmap.svg", "dendrogram.png", "dendrogram.svg"} {
		if len(out.Files[f]) == 0 {
			t.Errorf("no %s", f)
		}
	}
}

// TestSVGWellFormed: the inline tree and the embedded plots are well-formed
// XML.
func TestSVGWellFormed(t *testing.T) {
	in := fixture{sites: 2, switches: 2, ranksPer: 8, noise: 0.05, seed: 1}.input()
	out, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, b []byte) {
		dec := xml.NewDecoder(bytes.NewReader(b))
		elems := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, ok := tok.(xml.StartElement); ok {
				elems++
			}
		}
		if elems < 10 {
			t.Errorf("%s: only %d elements", name, elems)
		}
	}
	for _, f := range []string{"tree.svg", "heatmap.svg", "dendrogram.svg"} {
		check(f, out.Files[f])
	}
	page := string(out.HTML)
	i, j := strings.Index(page, "<svg"), strings.Index(page, "</svg>")
	if i < 0 || j < i {
		t.Fatal("no inline svg")
	}
	check("inline tree", []byte(page[i:j+len("</svg>")]))
	for _, m := range regexp.MustCompile(`data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)`).FindAllStringSubmatch(page, -1) {
		b, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatal(err)
		}
		check("embedded plot", b)
	}
	// Every rank is drawn for 32 ranks.
	if c := strings.Count(string(out.Files["tree.svg"]), `class="rk"`); c != 32 {
		t.Errorf("%d rank circles, want 32", c)
	}
}

// TestNoNetworkReferences: the page fetches nothing and runs no script.
func TestNoNetworkReferences(t *testing.T) {
	out, err := Build(fixture{sites: 2, switches: 2, ranksPer: 8, seed: 1}.input())
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(out.HTML), `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", `src="http`, "<script", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Error("page lacks a doctype")
	}
}

// TestTreeCollapsesLargeWorlds: 4096 ranks under 64 switches are drawn as
// 64 boxes of 64 ranks in a drawing no wider than the page.
func TestTreeCollapsesLargeWorlds(t *testing.T) {
	f := fixture{sites: 4, switches: 16, ranksPer: 64}
	root, err := treeFromTopology(f.topology())
	if err != nil {
		t.Fatal(err)
	}
	svg := string(treeSVG(root, func(r int) string { return fmt.Sprint(r) }))
	if c := strings.Count(svg, `class="rk"`); c != 0 {
		t.Errorf("%d rank circles drawn at 4096 ranks", c)
	}
	if c := strings.Count(svg, "· 64 ranks</text>"); c != 64 {
		t.Errorf("%d boxes of 64 ranks, want 64", c)
	}
	for _, s := range []string{"sw0 · 64 ranks", "r0-r63 · 10us · 10Gbps", "r4032-r4095", "each 50us", "1ms"} {
		if !strings.Contains(svg, s) {
			t.Errorf("tree lacks %q", s)
		}
	}
	if w, _ := layout(root); w > maxTreeWidth {
		t.Errorf("tree is %g px wide", w)
	}
}

// TestDistanceFillsFromTree: pairs a partial campaign skipped get the
// tree's round-trip path latency.
func TestDistanceFillsFromTree(t *testing.T) {
	f := fixture{sites: 2, switches: 2, ranksPer: 2}
	ds := f.dataset()
	ds.RTT.Pairs = ds.RTT.Pairs[:10] // pairs (0,1)..(0,7), (1,2), (1,3)
	d, err := DistanceFromDataset(ds, f.topology())
	if err != nil {
		t.Fatal(err)
	}
	if d.Missing != 28-10 || d.Filled != 18 || !d.complete() {
		t.Fatalf("missing %d filled %d", d.Missing, d.Filled)
	}
	if got, want := d.M.At(6, 7), 2*f.oneWay(6, 7); math.Abs(got-want) > 1e-15 {
		t.Errorf("filled (6,7) = %g, want %g", got, want)
	}
	// Without a tree the gaps stay, and the report says why there is no
	// dendrogram.
	in := f.input()
	in.Dataset = ds
	in.Topology.Tree = nil
	out, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Notes) == 0 || !strings.Contains(out.Notes[0], "18 pairs were not measured") {
		t.Errorf("notes %q", out.Notes)
	}
	if _, ok := out.Files["dendrogram.svg"]; ok {
		t.Error("dendrogram drawn from an incomplete matrix")
	}
}

// TestBuildRejectsMismatchedInputs: wrong sizes are errors, not panics.
func TestBuildRejectsMismatchedInputs(t *testing.T) {
	in := small8()
	in.Distance = &Distance{M: cluster.NewMatrix(5), Name: "x", Unit: formatSeconds}
	if _, err := Build(in); err == nil {
		t.Error("5x5 distance for 8 ranks accepted")
	}
	in = small8()
	in.Hierarchy = &Hierarchy{Dendrogram: &cluster.Dendrogram{N: 3, Merges: []cluster.Merge{{A: 0, B: 1, Height: 1, Size: 2}, {A: 2, B: 3, Height: 2, Size: 3}}}}
	if _, err := Build(in); err == nil {
		t.Error("3-point dendrogram for 8 ranks accepted")
	}
	if _, err := Build(Input{}); err == nil {
		t.Error("no topology accepted")
	}
	in = small8()
	in.Topology.Levels[0].Groups[0] = []int{0, 1, 2, 99}
	if _, err := Build(in); err == nil {
		t.Error("level with rank 99 of 8 accepted")
	}
}

func TestFormatting(t *testing.T) {
	cases := map[string]string{
		formatSeconds(20e-6):    "20us",
		formatSeconds(4.45e-3):  "4.45ms",
		formatSeconds(1.5):      "1.5s",
		formatSeconds(0.25):     "250ms",
		formatBandwidth(1.25e9): "10Gbps",
		formatBandwidth(1e8):    "800Mbps",
		formatSeconds(0):        "0s",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// TestModelSection: model.json's Hockney and PLogP parameters are
// summarised with their units.
func TestModelSection(t *testing.T) {
	in := small8()
	in.Model = &model.File{Version: 1, Size: 8,
		Hockney: &model.HockneySection{
			Default: &model.Hockney{AlphaS: 10e-6, BetaSPerByte: 1e-9},
			Pairs: []model.HockneyEntry{
				{A: 0, B: 1, Hockney: model.Hockney{AlphaS: 5e-6, BetaSPerByte: 1e-9}},
				{A: 0, B: 4, Hockney: model.Hockney{AlphaS: 1e-3, BetaSPerByte: 1e-8}},
			},
		},
		PLogP: &model.PLogPSection{Default: &model.PLogP{LS: 3e-6}},
	}
	out, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(parsePage(t, out.HTML)["model"]), " ")
	for _, s := range []string{"Hockney default 1 10us 8Gbps", "Hockney rank pairs 2 5us … 1ms", "800Mbps … 8Gbps", "PLogP default (L) 1 3us"} {
		if !strings.Contains(text, s) {
			t.Errorf("model section lacks %q:\n%s", s, text)
		}
	}
}

// TestReinfjellFig51AlternatingSocketsBecomeBlocks: seed 003 Fig. 5.1 sees
// "a clear alternating pattern ... caused by inter-socket communication"
// when ranks are mapped to sockets in turn. In rank order the heat map's
// first row alternates near/far; in hierarchy order it is one near block
// (the rank's socket) followed by one far block.
func TestReinfjellFig51AlternatingSocketsBecomeBlocks(t *testing.T) {
	n := 8
	d := cluster.NewMatrix(n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 0.65e-6 // inter-socket
			if i%2 == j%2 {
				v = 0.45e-6
			}
			d.Set(i, j, v)
		}
	}
	levels := []topo.Level{{Name: "socket", Groups: [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}}}, {Name: "all", Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}}}
	s, ok := newColorScale(d)
	if !ok || s.log {
		t.Fatalf("scale %+v", s)
	}
	near, far := viridis(0), viridis(1)
	row := func(order []int) []bool { // true = far, for row 0 without the diagonal
		img := heatmapImage(d, order, s)
		px := img.Bounds().Dx() / n
		var out []bool
		for k := 1; k < n; k++ {
			c := img.RGBAAt(k*px+px/2, px/2)
			switch c {
			case near:
				out = append(out, false)
			case far:
				out = append(out, true)
			default:
				t.Fatalf("cell (0,%d) has colour %v", k, c)
			}
		}
		return out
	}
	identity := []int{0, 1, 2, 3, 4, 5, 6, 7}
	if got := row(identity); !slices.Equal(got, []bool{true, false, true, false, true, false, true}) {
		t.Errorf("rank order row 0 = %v, want alternating far/near", got)
	}
	if got := row(HierarchyOrder(levels, n)); !slices.Equal(got, []bool{false, false, false, true, true, true, true}) {
		t.Errorf("hierarchy order row 0 = %v, want 3 near then 4 far", got)
	}
}

// TestBuildTopologyOnly: a topology alone gives the tree, the levels and
// the cost, and no data sections.
func TestBuildTopologyOnly(t *testing.T) {
	in := small8()
	in.Dataset, in.Truth = nil, nil
	out, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	sec := parsePage(t, out.HTML)
	for _, id := range []string{"summary", "tree", "levels", "cost"} {
		if _, ok := sec[id]; !ok {
			t.Errorf("section %q missing", id)
		}
	}
	for _, id := range []string{"heatmap", "dendrogram", "accuracy", "model"} {
		if _, ok := sec[id]; ok {
			t.Errorf("section %q present without data", id)
		}
	}
	if !strings.Contains(sec["cost"], "500ms") {
		t.Errorf("cost lacks the topology's 500 ms: %s", sec["cost"])
	}
}

// FuzzLoadDirBuild: whatever dataset.json and topology.json hold, loading
// and building a report returns an error or a page, never panics.
func FuzzLoadDirBuild(f *testing.F) {
	in := small8()
	var tb, db bytes.Buffer
	if err := in.Topology.Write(&tb); err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	if err := in.Dataset.Save(dir + "/dataset.json"); err != nil {
		f.Fatal(err)
	}
	dsBytes, err := os.ReadFile(dir + "/dataset.json")
	if err != nil {
		f.Fatal(err)
	}
	db.Write(dsBytes)
	f.Add(tb.Bytes(), db.Bytes())
	f.Add(tb.Bytes(), []byte(`{"version":1,"world":{"size":8},"rtt":{"pairs":[{"a":0,"b":1,"result":{"min_s":-1}}]}}`))
	f.Add(tb.Bytes(), []byte(`{"version":1,"world":{"size":8},"bandwidth":{"pairs":[{"a":0,"b":1,"result":{"bandwidth_Bps":0}}]}}`))
	f.Add([]byte(`{"version":1,"size":2,"ranks":[{"rank":0},{"rank":1}],"levels":[{"name":"all","groups":[[0,1]]}],"tree":{"nodes":[{"id":"a","rank":0},{"id":"b","rank":1}],"edges":[{"a":"a","b":"b","latency_s":1e-6}]}}`),
		[]byte(`{"version":1,"world":{"size":2},"rtt":{"pairs":[{"a":0,"b":1,"result":{"min_s":2e-6}}]}}`))
	f.Fuzz(func(t *testing.T, topoJSON, dsJSON []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/topology.json", topoJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/dataset.json", dsJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := LoadDir(dir)
		if err != nil {
			return
		}
		if in.Topology.Size > 64 {
			return // keep each input fast
		}
		in.Truth, in.SVGOnly = in.Topology.Levels, true
		_, _ = Build(in)
	})
}

// TestBuildWithCallerMatrix: discover hands in its own matrix and
// dendrogram; unlabelled matrices get neutral labels, and the cuts it
// gives are drawn.
func TestBuildWithCallerMatrix(t *testing.T) {
	in := small8()
	d, err := DistanceFromDataset(in.Dataset, in.Topology)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HierarchyOf(d.M, cluster.SingleLinkage)
	if err != nil {
		t.Fatal(err)
	}
	in.Distance = &Distance{M: d.M}
	in.Hierarchy = h
	in.SVGOnly = true
	out, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Files["heatmap.png"]; ok {
		t.Error("SVGOnly wrote a PNG")
	}
	sec := parsePage(t, out.HTML)
	if !strings.Contains(sec["dendrogram"], "single linkage") || !strings.Contains(sec["dendrogram"], "host (2 groups)") {
		t.Errorf("dendrogram section: %s", sec["dendrogram"])
	}
	if !strings.Contains(sec["heatmap"], "The distance of every pair") {
		t.Errorf("heat map section: %s", sec["heatmap"])
	}
}
