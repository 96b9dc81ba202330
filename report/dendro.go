package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"netaware/cluster"
)

// ULink is one merge of a dendrogram drawn as an upside-down U: the two
// legs stand on the children (at XA, YA and XB, YB) and the bar joins them
// at the merge's height.
type ULink struct {
	XA, YA float64 // left child: position and height (0 for a leaf)
	XB, YB float64 // right child
	Height float64 // the bar
	Merge  int     // index of the merge in the dendrogram
}

// DendrogramLayout places a dendrogram for drawing: leaves on the x axis at
// 0, 1, ..., n-1 in the order of a depth-first walk from the last merge
// (first child first, as SciPy draws), each cluster above the mean of its
// two children, and one U link per merge. order[k] is the point drawn at
// x = k. Merges with a height below a child's (centroid linkages can do
// that) keep their own height: the picture then shows the inversion
// instead of hiding it.
func DendrogramLayout(d *cluster.Dendrogram) (order []int, links []ULink, err error) {
	if err := cluster.ValidateDendrogram(d); err != nil {
		return nil, nil, err
	}
	n := d.N
	if n == 0 {
		return nil, nil, nil
	}
	// The merge list may describe a forest only if it is incomplete, which
	// ValidateDendrogram rules out; so the last merge is the root.
	root := n + len(d.Merges) - 1
	order = make([]int, 0, n)
	// Iterative DFS: deep chain-like dendrograms of thousands of points
	// must not grow the goroutine stack without bound.
	stack := []int{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id < n {
			order = append(order, id)
			continue
		}
		m := d.Merges[id-n]
		stack = append(stack, m.B, m.A)
	}
	x := make([]float64, n+len(d.Merges))
	y := make([]float64, n+len(d.Merges))
	for k, p := range order {
		x[p] = float64(k)
	}
	links = make([]ULink, len(d.Merges))
	for i, m := range d.Merges {
		a, b := m.A, m.B
		if x[a] > x[b] {
			a, b = b, a
		}
		links[i] = ULink{XA: x[a], YA: y[a], XB: x[b], YB: y[b], Height: m.Height, Merge: i}
		x[n+i] = (x[a] + x[b]) / 2
		y[n+i] = m.Height
	}
	return order, links, nil
}

// CutLine is a horizontal dashed line across the dendrogram: the height at
// which one topology level is cut, and the level's name.
type CutLine struct {
	Height float64
	Label  string
}

// dendroPlotter draws the U links of a dendrogram and the cut lines.
type dendroPlotter struct {
	links []ULink
	n     int
	cuts  []CutLine
	floor float64 // y of leaves (0, or a positive floor on a log axis)
	top   float64
	line  draw.LineStyle
	cut   draw.LineStyle
	text  draw.TextStyle
	// ty maps a height to the axis: log10 on a log axis, identity
	// otherwise. (gonum's LogScale misplaces the rotated axis label, so
	// the report transforms the data instead and labels ticks itself.)
	ty func(float64) float64
}

func (p *dendroPlotter) leg(y float64) float64 {
	if y < p.floor {
		y = p.floor
	}
	return p.ty(y)
}

// Plot implements plot.Plotter.
func (p *dendroPlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, l := range p.links {
		pts := []vg.Point{
			{X: trX(l.XA), Y: trY(p.leg(l.YA))},
			{X: trX(l.XA), Y: trY(p.leg(l.Height))},
			{X: trX(l.XB), Y: trY(p.leg(l.Height))},
			{X: trX(l.XB), Y: trY(p.leg(l.YB))},
		}
		c.StrokeLines(p.line, c.ClipLinesXY(pts)...)
	}
	for _, cl := range p.cuts {
		y := trY(p.ty(cl.Height))
		c.StrokeLines(p.cut, []vg.Point{{X: c.Min.X, Y: y}, {X: c.Max.X, Y: y}})
		p.text.Handler = plt.TextHandler
		// Left-aligned from the axis: the SVG names fonts the browser may
		// replace by a wider one, and a right-aligned label then ran off
		// the plot's right edge.
		c.FillText(p.text, vg.Point{X: c.Min.X + 4, Y: y + 3}, cl.Label)
	}
}

// DataRange implements plot.DataRanger.
func (p *dendroPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(p.n) - 0.5, p.ty(p.floor), p.ty(p.top)
}

// scaledTicks labels an axis that shows ty(value) with the values' units.
type scaledTicks struct {
	unitTicks
	lo, hi float64 // value range
	ty     func(float64) float64
}

func (s scaledTicks) Ticks(_, _ float64) []plot.Tick {
	ts := s.unitTicks.Ticks(s.lo, s.hi)
	for i := range ts {
		ts[i].Value = s.ty(ts[i].Value)
	}
	return ts
}

// cutLines turns the heights returned by cluster.LevelCuts (the last merge
// of each band) into lines drawn in the gap above the band, at the
// geometric mean of the band's last height and the next merge height, and
// names each after the found level with the same number of groups.
func cutLines(d *cluster.Dendrogram, cuts []float64, names map[int]string) ([]CutLine, error) {
	var out []CutLine
	for i, h := range cuts {
		next := math.Inf(1)
		for _, m := range d.Merges {
			if m.Height > h && m.Height < next {
				next = m.Height
			}
		}
		y := h
		switch {
		case math.IsInf(next, 1):
			y = h * 1.05
		case h > 0:
			y = math.Sqrt(h * next)
		default:
			y = next / 2
		}
		lab, err := cluster.CutHeight(d, h)
		if err != nil {
			return nil, fmt.Errorf("cut %d at %g: %w", i, h, err)
		}
		k := 0
		for _, v := range lab {
			k = max(k, v+1)
		}
		name, ok := names[k]
		if !ok {
			name = fmt.Sprintf("cut %d", i+1)
		}
		out = append(out, CutLine{Height: y, Label: fmt.Sprintf("%s (%d groups)", name, k)})
	}
	return out, nil
}

// dendrogramPlot builds the dendrogram figure. unit formats heights for the
// axis (seconds, or the distance's own unit).
func dendrogramPlot(d *cluster.Dendrogram, cuts []CutLine, yLabel string, unit func(float64) string) (*plot.Plot, error) {
	order, links, err := DendrogramLayout(d)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	sansFonts(p)
	p.Title.Text = "Dendrogram with level cuts"
	p.Y.Label.Text = yLabel
	p.X.Label.Text = fmt.Sprintf("%d ranks in dendrogram order", d.N)
	lo, hi := math.Inf(1), 0.0
	for _, m := range d.Merges {
		if m.Height > 0 {
			lo = math.Min(lo, m.Height)
		}
		hi = math.Max(hi, m.Height)
	}
	for _, c := range cuts {
		// Every cut is drawn: the axis spans them as well as the merges
		// (at 4096 ranks the host cut lay below a band of merges that
		// started the axis at 18 us, and was listed but not drawn).
		hi = math.Max(hi, c.Height)
		if c.Height > 0 {
			lo = math.Min(lo, c.Height)
		}
	}
	dp := &dendroPlotter{links: links, n: d.N, cuts: cuts, top: hi * 1.08, ty: func(v float64) float64 { return v }}
	dp.line = draw.LineStyle{Color: color.RGBA{R: 0x1f, G: 0x3a, B: 0x5f, A: 0xff}, Width: vg.Points(0.8)}
	if d.N > 256 {
		dp.line.Width = vg.Points(0.4)
	}
	dp.cut = draw.LineStyle{Color: color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	dp.text = draw.TextStyle{Color: dp.cut.Color, Font: p.Y.Label.TextStyle.Font, XAlign: draw.XLeft, YAlign: draw.YBottom}
	dp.text.Font.Size = vg.Points(9)
	if !math.IsInf(lo, 1) && hi/lo > 20 {
		// Heights spanning decades (socket vs site) would squash the lower
		// levels against the axis on a linear scale.
		dp.floor = lo / 2
		if d.N > 256 {
			// Thousands of legs down to the axis paint a solid block;
			// stubs keep the bottom band readable.
			dp.floor = lo * 0.93
		}
		dp.top = hi * 1.5
		dp.ty = math.Log10
		p.Y.Tick.Marker = scaledTicks{unitTicks{log: true, unit: unit}, dp.floor, dp.top, dp.ty}
	} else {
		if !math.IsInf(lo, 1) && hi > lo && hi-lo < lo/2 {
			// All merges in a narrow band far above zero (one flat level
			// plus noise): start the axis just below the band, or the
			// structure is a flat comb at the top.
			dp.floor = lo - 0.25*(hi-lo)
			dp.top = hi + 0.1*(hi-lo)
		}
		p.Y.Tick.Marker = scaledTicks{unitTicks{unit: unit}, dp.floor, dp.top, dp.ty}
	}
	p.Y.Min, p.Y.Max = dp.ty(dp.floor), dp.ty(dp.top)
	p.Add(dp)
	if d.N <= 64 {
		names := make([]string, len(order))
		for k, r := range order {
			names[k] = fmt.Sprint(r)
		}
		var ticks []plot.Tick
		for k, s := range names {
			ticks = append(ticks, plot.Tick{Value: float64(k), Label: s})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		if d.N > 24 {
			// Side by side, 64 rank numbers ran into each other; upright
			// and smaller, each keeps its leaf's width.
			p.X.Tick.Label.Rotation = math.Pi / 2
			p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
			p.X.Tick.Label.Font.Size = vg.Points(7.5)
		}
	} else {
		p.X.Tick.Marker = plot.ConstantTicks(nil)
	}
	p.X.Min, p.X.Max = -0.5, float64(d.N)-0.5
	return p, nil
}
