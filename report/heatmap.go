package report

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"netaware/cluster"
	"netaware/topo"
)

// HierarchyOrder orders ranks so that every group of every level is a
// contiguous run: ranks are sorted by their group at the coarsest level,
// then at the next finer one, and so on, then by rank; groups are taken in
// order of their smallest rank. This is the ordering of seed 003's distance
// plots (Fig. 5.1): the hierarchy shows as nested blocks on the diagonal.
func HierarchyOrder(levels []topo.Level, n int) []int {
	keys := make([][]int, n)
	for r := range keys {
		keys[r] = make([]int, len(levels))
	}
	for li, l := range levels {
		// Group index = rank order of the group's smallest member, so that
		// equal structure gives equal order whatever the file's group order.
		type g struct{ min, idx int }
		gs := make([]g, len(l.Groups))
		for gi, grp := range l.Groups {
			m := math.MaxInt
			for _, r := range grp {
				m = min(m, r)
			}
			gs[gi] = g{m, gi}
		}
		slices.SortFunc(gs, func(a, b g) int { return a.min - b.min })
		for pos, x := range gs {
			for _, r := range l.Groups[x.idx] {
				if r >= 0 && r < n {
					keys[r][len(levels)-1-li] = pos
				}
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := slices.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return a - b
	})
	return order
}

// levelBoundaries returns, for a level, the positions k (0 < k < n) in
// order at which a new group starts.
func levelBoundaries(l topo.Level, order []int) []int {
	group := map[int]int{}
	for gi, g := range l.Groups {
		for _, r := range g {
			group[r] = gi
		}
	}
	var out []int
	for k := 1; k < len(order); k++ {
		if group[order[k]] != group[order[k-1]] {
			out = append(out, k)
		}
	}
	return out
}

// colorScale maps a distance to [0, 1], logarithmically when the values
// span more than a decade and a half (socket vs switch vs site latencies),
// linearly otherwise.
type colorScale struct {
	lo, hi float64
	log    bool
}

// logThreshold is the max/min ratio from which the heat map uses a log
// scale: with a linear scale and 30x between the nearest and farthest pairs,
// everything below a tenth of the range is one colour.
const logThreshold = 30

// hasUnmeasured tells whether a pair of distinct points has no value.
func hasUnmeasured(d *cluster.Matrix) bool {
	for i := 0; i < d.N; i++ {
		for j := 0; j < d.N; j++ {
			if v := d.At(i, j); i != j && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return true
			}
		}
	}
	return false
}

func newColorScale(d *cluster.Matrix) (colorScale, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < d.N; i++ {
		for j := 0; j < d.N; j++ {
			v := d.At(i, j)
			if i == j || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if v > 0 {
				lo = math.Min(lo, v)
			}
			hi = math.Max(hi, v)
		}
	}
	if math.IsInf(hi, -1) || !(hi > 0) {
		return colorScale{}, false
	}
	if math.IsInf(lo, 1) {
		lo = 0
	}
	s := colorScale{lo: lo, hi: hi, log: lo > 0 && hi/lo > logThreshold}
	if s.hi == s.lo {
		s.lo = s.hi / 2
	}
	return s, true
}

func (s colorScale) t(v float64) float64 {
	if math.IsNaN(v) {
		return math.NaN()
	}
	if s.log {
		if v <= 0 {
			return 0
		}
		return math.Log(v/s.lo) / math.Log(s.hi/s.lo)
	}
	return (v - s.lo) / (s.hi - s.lo)
}

// heatmapMaxCells bounds the raster: above it, blocks of ranks are averaged
// into one cell, which keeps 4096-rank reports a few hundred kilobytes.
const heatmapMaxCells = 1024

// heatmapImage rasterises d in the given order: cell (row k, column l) is
// the mean of the block of pairs it covers (NaN if none measured), scaled up
// by whole pixels so that viewers do not blur small matrices.
func heatmapImage(d *cluster.Matrix, order []int, s colorScale) *image.RGBA {
	n := len(order)
	block := (n + heatmapMaxCells - 1) / heatmapMaxCells
	cells := (n + block - 1) / block
	px := max(1, 800/cells)
	img := image.NewRGBA(image.Rect(0, 0, cells*px, cells*px))
	for a := 0; a < cells; a++ {
		for b := 0; b < cells; b++ {
			sum, cnt := 0.0, 0
			for i := a * block; i < min(n, (a+1)*block); i++ {
				for j := b * block; j < min(n, (b+1)*block); j++ {
					v := d.At(order[i], order[j])
					if order[i] == order[j] {
						v = 0
					}
					if !math.IsNaN(v) {
						sum += v
						cnt++
					}
				}
			}
			c := missingColor
			if cnt > 0 {
				c = viridis(s.t(sum / float64(cnt)))
			}
			for y := a * px; y < (a+1)*px; y++ {
				for x := b * px; x < (b+1)*px; x++ {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	return img
}

// gridPlotter draws level boundaries over the heat map: a new group starts
// at every boundary, coarser levels get thicker lines.
type gridPlotter struct {
	n     int
	lines [][]int // per level, fine to coarse
}

func (g *gridPlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for li, ks := range g.lines {
		w := vg.Points(0.6 + 1.2*float64(li)/math.Max(1, float64(len(g.lines)-1)))
		st := draw.LineStyle{Color: color.White, Width: w}
		if len(g.lines) == 1 {
			st.Width = vg.Points(1.4)
		}
		if len(ks) > 32 {
			// A fine grid at full strength would hide the cells.
			st.Color, st.Width = color.NRGBA{0xff, 0xff, 0xff, 0x90}, vg.Points(0.4)
		}
		for _, k := range ks {
			x, y := float64(k), float64(g.n-k)
			c.StrokeLines(st, []vg.Point{{X: trX(x), Y: trY(0)}, {X: trX(x), Y: trY(float64(g.n))}})
			c.StrokeLines(st, []vg.Point{{X: trX(0), Y: trY(y)}, {X: trX(float64(g.n)), Y: trY(y)}})
		}
	}
}

// maxBoundaryLines drops levels with more groups than this from the grid:
// lines every few pixels hide the data they are meant to structure.
const maxBoundaryLines = 128

// heatmapLevels are the levels worth drawing: not all-singletons, not the
// single group, and not so fine that lines cover the picture.
func heatmapLevels(levels []topo.Level, n int) []topo.Level {
	var out []topo.Level
	for _, l := range levels {
		if len(l.Groups) <= 1 || len(l.Groups) >= n || len(l.Groups) > maxBoundaryLines {
			continue
		}
		out = append(out, l)
	}
	return out
}

// heatmapFigure draws the distance matrix in hierarchy order with the
// level boundaries and a colour bar.
func heatmapFigure(d *cluster.Matrix, levels []topo.Level, what string, unit func(float64) string) (figure, error) {
	n := d.N
	s, ok := newColorScale(d)
	if !ok {
		return figure{}, fmt.Errorf("heat map: the distance matrix has no positive finite entry")
	}
	order := HierarchyOrder(levels, n)
	shown := heatmapLevels(levels, n)
	grid := &gridPlotter{n: n}
	for _, l := range shown {
		grid.lines = append(grid.lines, levelBoundaries(l, order))
	}

	p := plot.New()
	sansFonts(p)
	p.Title.Text = fmt.Sprintf("%s, ranks in hierarchy order", what)
	p.Add(plotter.NewImage(heatmapImage(d, order, s), 0, 0, float64(n), float64(n)))
	p.Add(grid)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, float64(n), 0, float64(n)
	p.X.Label.Text, p.Y.Label.Text = "rank", "rank"
	xt, yt := rankTicks(order, shown)
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	p.X.Padding, p.Y.Padding = 0, 0

	bar := plot.New()
	sansFonts(bar)
	bar.HideX()
	bar.Add(plotter.NewImage(gradient(), 0, 0, 1, 1))
	bar.X.Min, bar.X.Max, bar.Y.Min, bar.Y.Max = 0, 1, 0, 1
	bar.Y.Padding = 0
	bar.Y.Tick.Marker = barTicks{s: s, unit: unit}
	// The title names the quantity; the bar's own label only says how it
	// is scaled (the full name, "one-way latency on the inferred tree",
	// ran past both ends of the bar in a browser's stand-in font).
	if s.log {
		bar.Y.Label.Text = "log scale"
	}

	const w, h = 620, 540
	barW := vg.Length(110)
	return figure{w: w, h: h, draw: func(c draw.Canvas) {
		main := draw.Crop(c, 0, -barW, 0, 0)
		p.Draw(main)
		da := p.DataCanvas(main)
		// The bar spans the matrix's height; the fudge keeps its (hidden)
		// x axis padding from shrinking it.
		bc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Max.X - barW + 8, Y: da.Min.Y},
			Max: vg.Point{X: c.Max.X - 8, Y: da.Max.Y},
		}}
		bar.Draw(bc)
	}}, nil
}

// gradient is the colour bar's raster, bottom = 0, top = 1 (the SVG
// writer stretches it without keeping its aspect ratio, see figure.render).
func gradient() image.Image {
	const rows = 256
	img := image.NewRGBA(image.Rect(0, 0, 1, rows))
	for y := 0; y < rows; y++ {
		img.SetRGBA(0, y, viridis(1-float64(y)/(rows-1)))
	}
	return img
}

// barTicks labels the colour bar (axis 0..1) with the distances those
// colours stand for.
type barTicks struct {
	s    colorScale
	unit func(float64) string
}

func (b barTicks) Ticks(_, _ float64) []plot.Tick {
	vals := unitTicks{log: b.s.log, unit: b.unit}.Ticks(b.s.lo, b.s.hi)
	var out []plot.Tick
	for _, t := range vals {
		out = append(out, plot.Tick{Value: b.s.t(t.Value), Label: t.Label})
	}
	return out
}

// rankTicks labels the matrix axes: every rank for small matrices, else the
// first rank of each group of the coarsest drawn level (if not too many).
func rankTicks(order []int, shown []topo.Level) (x, y plot.Ticker) {
	n := len(order)
	var pos []int
	switch {
	case n <= 32:
		for k := range order {
			pos = append(pos, k)
		}
	case len(shown) > 0:
		pos = append([]int{0}, levelBoundaries(shown[len(shown)-1], order)...)
		if len(pos) > 24 {
			pos = nil
		}
	}
	var xs, ys plot.ConstantTicks
	for _, k := range pos {
		lab := fmt.Sprint(order[k])
		off := 0.5
		if n > 32 {
			off = 0 // a group's first rank sits at its left edge
		}
		xs = append(xs, plot.Tick{Value: float64(k) + off, Label: lab})
		ys = append(ys, plot.Tick{Value: float64(n-k) - off, Label: lab})
	}
	return xs, ys
}
