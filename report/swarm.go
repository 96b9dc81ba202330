package report

import (
	"fmt"
	"html/template"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"netaware/dataset"
	"netaware/topo"
)

// swarmView is the report's swarm tomography section (seed 000 Ch. 4-5):
// the weighted graph in hierarchy order, the NMI of successive
// iterations' hierarchies, and the bandwidth tree.
type swarmView struct {
	Iterations int
	Stable     bool
	Weight     string
	Graph      template.URL
	NMI        template.URL
	Tree       []swarmTreeRow
	TreeLevel  string
	TreeUnit   string
}

type swarmTreeRow struct {
	A, B   string
	Weight string
}

// swarmSection builds the view, or nil when the dataset has no swarm.
func swarmSection(out *Output, v *view, t *topo.Topology, ds *dataset.Dataset) (*swarmView, error) {
	if ds == nil || ds.Swarm == nil || len(ds.Swarm.Iterations) == 0 {
		return nil, nil
	}
	s := ds.Swarm
	sv := &swarmView{Iterations: len(s.Iterations), Stable: s.Stable, Weight: s.Params.Weight}
	if sv.Weight == "" {
		sv.Weight = dataset.WeightRate
	}
	unit := func(x float64) string { return trimNum(x) + " fragments/s" }
	if sv.Weight == dataset.WeightFragments {
		unit = func(x float64) string { return trimNum(x) + " fragments" }
	}
	g := s.Graph(t.Size, 0)
	// Pairs that never exchanged a fragment are unmeasured, not far.
	for i := range g.Data {
		if g.Data[i] == 0 {
			g.Data[i] = math.NaN()
		}
	}
	fig, err := heatmapFigure(g, t.Levels, "swarm "+sv.Weight, unit)
	if err != nil {
		v.Notes = append(v.Notes, fmt.Sprintf("no swarm graph: %v", err))
	} else if err := addFigure(out, v, "swarm-graph", fig, &sv.Graph); err != nil {
		return nil, err
	}
	var pts plotter.XYs
	for i, it := range s.Iterations {
		if it.NMI != nil {
			pts = append(pts, plotter.XY{X: float64(i + 1), Y: *it.NMI})
		}
	}
	if len(pts) > 0 {
		p := plot.New()
		sansFonts(p)
		p.Title.Text = "agreement of successive iterations' hierarchies"
		p.X.Label.Text, p.Y.Label.Text = "iteration", "NMI with the previous iteration"
		p.Y.Min, p.Y.Max = 0, 1.05
		p.X.Min, p.X.Max = 1, float64(len(s.Iterations))+0.5
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		p.Add(line, points, plotter.NewGrid())
		if err := addFigure(out, v, "swarm-nmi", plotFigure(p, vg.Length(560), vg.Length(300)), &sv.NMI); err != nil {
			return nil, err
		}
	}
	if bt := t.BandwidthTree; bt != nil {
		sv.TreeLevel, sv.TreeUnit = bt.Level, bt.Unit
		name := func(i int) string {
			g := bt.Groups[i]
			return fmt.Sprintf("%s %d (%d ranks from %d)", bt.Level, i, len(g), g[0])
		}
		for _, e := range bt.Edges {
			sv.Tree = append(sv.Tree, swarmTreeRow{A: name(e.A), B: name(e.B), Weight: trimNum(e.Weight)})
		}
	}
	return sv, nil
}
