// Package report turns a discovery run (topology, dataset, distance matrix,
// dendrogram, model, and the platform's truth when known) into one
// self-contained HTML report and standalone plots: the topology tree, the
// distance heat map in hierarchy order, the dendrogram with its level cuts,
// per-level latency and bandwidth, the measurement cost and the accuracy
// against the truth. The report reads no clock and fetches nothing: the
// caller gives the date, and every picture is inline.
package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"netaware/dataset"
	"netaware/internal/atomicfile"
	"netaware/model"
	"netaware/platform"
	"netaware/topo"
)

// Input is everything a report is built from. Only Topology is required;
// each other piece adds sections.
type Input struct {
	// Title names the world, e.g. the platform name; Date is printed as
	// given (the report never reads the clock).
	Title, Date string
	Topology    *topo.Topology
	Dataset     *dataset.Dataset
	// Distance is the matrix discovery clustered. When nil it is rebuilt
	// from Dataset with DistanceFromDataset.
	Distance *Distance
	// Hierarchy is the dendrogram and its cuts. When nil it is rebuilt
	// from a complete Distance with HierarchyOf and the topology's linkage.
	Hierarchy *Hierarchy
	// Truth is the platform's ground truth; when nil and Platform is set it
	// comes from Platform.Truth().
	Truth     []topo.Level
	TruthName string
	Platform  *platform.Platform
	Model     *model.File
	// Seed draws the random shared-link queries (DefaultSeed unless a
	// user asks for another draw).
	Seed uint64
	// SVGOnly skips the PNG copies of the plots (the page embeds the SVG
	// ones): rasterising is most of a report's cost.
	SVGOnly bool
}

// DefaultSeed is the seed of the shared-link queries of discover's report
// and of 'netaware report' by default, so that both draw the same queries.
const DefaultSeed = 1

// Output is a built report: the HTML page and the standalone plot files
// (by file name).
type Output struct {
	HTML  []byte
	Files map[string][]byte
	// Notes explain sections that were left out and why.
	Notes []string
}

// Build renders the report.
func Build(in Input) (*Output, error) {
	t := in.Topology
	if t == nil {
		return nil, fmt.Errorf("report: no topology")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("report: topology: %w", err)
	}
	out := &Output{Files: map[string][]byte{}}
	v := &view{In: in, Size: t.Size}
	note := func(format string, a ...any) { out.Notes = append(out.Notes, fmt.Sprintf(format, a...)) }

	// Distance and hierarchy.
	if in.Distance == nil && in.Dataset != nil {
		d, err := DistanceFromDataset(in.Dataset, t)
		if err != nil {
			note("no distance matrix: %v", err)
		} else {
			in.Distance = d
		}
	}
	if d := in.Distance; d != nil {
		if d.M == nil {
			return nil, fmt.Errorf("report: distance without a matrix")
		}
		// Callers handing in their own matrix may leave the labels out.
		if d.Unit == nil {
			d.Unit = func(v float64) string { return trimNum(v) }
		}
		if d.Name == "" {
			d.Name = "distance"
		}
	}
	if in.Distance != nil && in.Distance.M.N != t.Size {
		return nil, fmt.Errorf("report: distance matrix is %dx%d, topology has %d ranks", in.Distance.M.N, in.Distance.M.N, t.Size)
	}
	if h := in.Hierarchy; h != nil && (h.Dendrogram == nil || h.Dendrogram.N != t.Size) {
		return nil, fmt.Errorf("report: the dendrogram does not cover the topology's %d ranks", t.Size)
	}
	if in.Hierarchy == nil && in.Distance != nil {
		if !in.Distance.complete() {
			note("no dendrogram: %d pairs were not measured and the topology has no tree to fill them", in.Distance.Missing-in.Distance.Filled)
		} else if h, err := HierarchyOf(in.Distance.M, linkageOf(t)); err != nil {
			note("no dendrogram: %v", err)
		} else {
			in.Hierarchy = h
		}
	}
	v.Dist = in.Distance

	// Tree.
	root, err := treeFromTopology(t)
	v.TreeFromLevels = err != nil
	if err != nil {
		root = treeFromLevels(t)
	}
	treeSVGBytes := treeSVG(root, func(r int) string { return rankTooltip(t, r) })
	out.Files["tree.svg"] = treeSVGBytes
	v.TreeSVG = template.HTML(treeSVGBytes)
	v.TreeBoxes = bytes.Contains(treeSVGBytes, []byte(`class="bx"`))
	v.TreeBW = bytes.Contains(treeSVGBytes, []byte("bps"))

	// Heat map.
	if in.Distance != nil {
		fig, err := heatmapFigure(in.Distance.M, t.Levels, in.Distance.Name, in.Distance.Unit)
		if err != nil {
			note("no heat map: %v", err)
		} else if err := addFigure(out, v, "heatmap", fig, &v.Heatmap); err != nil {
			return nil, err
		}
		if s, ok := newColorScale(in.Distance.M); ok {
			v.HeatLog = s.log
			v.HeatRange = in.Distance.Unit(s.lo) + " to " + in.Distance.Unit(s.hi)
		}
		v.HeatGaps = hasUnmeasured(in.Distance.M)
	}

	// Dendrogram.
	if h := in.Hierarchy; h != nil && h.Dendrogram.N > 1 {
		names := map[int]string{}
		for _, l := range t.Levels {
			names[len(l.Groups)] = l.Name
		}
		cuts, err := cutLines(h.Dendrogram, h.Cuts, names)
		if err != nil {
			return nil, fmt.Errorf("report: dendrogram cuts: %w", err)
		}
		// The axis says only "merge height": the section's text names
		// the distance, and a browser's stand-in font drew the long label
		// ("merge height (one-way latency on the inferred tree)") past
		// both ends of the axis.
		unit := formatSeconds
		if in.Distance != nil {
			unit = in.Distance.Unit
		}
		p, err := dendrogramPlot(h.Dendrogram, cuts, "merge height", unit)
		if err != nil {
			return nil, fmt.Errorf("report: dendrogram: %w", err)
		}
		if err := addFigure(out, v, "dendrogram", plotFigure(p, 760, 400), &v.Dendrogram); err != nil {
			return nil, err
		}
		v.Cuts = cuts
		v.Linkage = h.Linkage.String()
	}

	// Levels with measurements.
	v.Levels = levelStats(t.Levels, t.Size, rttPairs(in.Dataset), bandwidthPairs(in.Dataset))
	for _, l := range v.Levels {
		if !math.IsNaN(l.BWWithin) || !math.IsNaN(l.BWBetween) {
			v.HaveBW = true
		}
		if !math.IsNaN(l.RTTWithin) || !math.IsNaN(l.RTTBetween) {
			v.HaveRTT = true
		}
	}

	v.Cost = costRows(t, in.Dataset)

	// Accuracy.
	if in.Truth == nil && in.Platform != nil {
		if in.Platform.NumRanks() == t.Size {
			in.Truth = in.Platform.TruthLevels()
			if in.TruthName == "" {
				in.TruthName = in.Platform.Name
			}
		} else {
			note("no accuracy: platform %s places %d ranks, the topology has %d", in.Platform.Name, in.Platform.NumRanks(), t.Size)
			in.Platform = nil
		}
	}
	acc, err := accuracy(t, in.Truth, in.Platform, in.Dataset, in.Seed)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	v.Acc = acc
	v.In = in
	if in.Model != nil {
		v.Model = modelRows(in.Model)
	}
	v.Notes = out.Notes

	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("report: html: %w", err)
	}
	out.HTML = buf.Bytes()
	return out, nil
}

// addFigure renders a figure as PNG and SVG files and embeds the SVG.
func addFigure(out *Output, v *view, name string, f figure, dst *template.URL) error {
	formats := []string{"png", "svg"}
	if v.In.SVGOnly {
		formats = formats[1:]
	}
	for _, format := range formats {
		b, err := f.render(format)
		if err != nil {
			return fmt.Errorf("report: %s.%s: %w", name, format, err)
		}
		out.Files[name+"."+format] = b
	}
	*dst = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(out.Files[name+".svg"]))
	return nil
}

// WriteDir builds the report and writes report.html and the plots into dir
// (atomically, file by file). It returns the paths written, report first.
func WriteDir(dir string, in Input) ([]string, *Output, error) {
	out, err := Build(in)
	if err != nil {
		return nil, nil, err
	}
	paths := []string{filepath.Join(dir, "report.html")}
	if err := atomicfile.WriteFile(paths[0], out.HTML); err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	if in.Hierarchy != nil && in.Distance != nil && in.Distance.Name == TreeDistanceName {
		p := filepath.Join(dir, HierarchyFileName)
		if err := writeHierarchy(p, in.Hierarchy, in.Distance.Name); err != nil {
			return nil, nil, fmt.Errorf("report: %w", err)
		}
		paths = append(paths, p)
	}
	names := make([]string, 0, len(out.Files))
	for n := range out.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := atomicfile.WriteFile(p, out.Files[n]); err != nil {
			return nil, nil, fmt.Errorf("report: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, out, nil
}

// rankTooltip describes a rank with the identity it reported.
func rankTooltip(t *topo.Topology, r int) string {
	s := fmt.Sprintf("rank %d", r)
	if r < len(t.Ranks) {
		rk := t.Ranks[r]
		if rk.Host != "" {
			s += " on " + rk.Host
		}
		if rk.Socket != nil {
			s += fmt.Sprintf(", socket %d", *rk.Socket)
		}
		if rk.Core != nil {
			s += fmt.Sprintf(", core %d", *rk.Core)
		}
	}
	return s
}

// costRow is one line of the measurement cost table.
type costRow struct {
	What                  string
	Measured, Total       int
	Percent               string
	Clock, Wall, Complete string
}

func costRows(t *topo.Topology, ds *dataset.Dataset) []costRow {
	var rows []costRow
	pct := func(a, b int) string {
		if b <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(b))
	}
	secs := func(s float64) string {
		if s <= 0 {
			return "–"
		}
		return formatSeconds(s)
	}
	all := t.Size * (t.Size - 1) / 2
	if ds != nil {
		add := func(name string, measured, total int, clock float64, complete bool) {
			c := "yes"
			if !complete {
				c = "no (resumable)"
			}
			rows = append(rows, costRow{What: name, Measured: measured, Total: total, Percent: pct(measured, all), Clock: secs(clock), Wall: "–", Complete: c})
		}
		if s := ds.RTT; s != nil {
			add("RTT ping-pong", len(s.Pairs), s.PairsTotal, s.ClockS, s.Complete)
		}
		if s := ds.PLogP; s != nil {
			add("PLogP", len(s.Pairs), s.PairsTotal, s.ClockS, s.Complete)
		}
		if s := ds.Hockney; s != nil {
			add("Hockney", len(s.Pairs), s.PairsTotal, s.ClockS, s.Complete)
		}
		if s := ds.Bandwidth; s != nil {
			add("bulk bandwidth", len(s.Pairs), s.PairsTotal, s.ClockS, s.Complete)
		}
	}
	if m := t.Measurements; m != nil {
		rows = append(rows, costRow{What: "discovery (topology.json)", Measured: m.PairsMeasured, Total: m.PairsTotal,
			Percent: pct(m.PairsMeasured, m.PairsTotal), Clock: secs(m.VirtualTimeS), Wall: secs(m.WallTimeS), Complete: "–"})
	}
	return rows
}

// modelRow summarises one part of model.json.
type modelRow struct{ Part, Entries, Latency, Bandwidth string }

func modelRows(f *model.File) []modelRow {
	var rows []modelRow
	rng := func(v []float64, unit func(float64) string) string {
		if len(v) == 0 {
			return "–"
		}
		sort.Float64s(v)
		lo, hi := v[0], v[len(v)-1]
		if hi <= lo*1.005 {
			return unit(lo)
		}
		return fmt.Sprintf("%s … %s (median %s)", unit(lo), unit(hi), unit(median(v)))
	}
	if h := f.Hockney; h != nil {
		if d := h.Default; d != nil {
			rows = append(rows, modelRow{"Hockney default", "1", formatSeconds(d.AlphaS), bwOrDash(d.BandwidthBps())})
		}
		for _, part := range []struct {
			name string
			es   []model.HockneyEntry
		}{{"Hockney rank pairs", h.Pairs}, {"Hockney group pairs", h.GroupPairs}} {
			if len(part.es) == 0 {
				continue
			}
			var a, b []float64
			for _, e := range part.es {
				a = append(a, e.AlphaS)
				if bw := e.BandwidthBps(); bw > 0 {
					b = append(b, bw)
				}
			}
			rows = append(rows, modelRow{part.name, fmt.Sprint(len(part.es)), rng(a, formatSeconds), rng(b, formatBandwidth)})
		}
	}
	if p := f.PLogP; p != nil {
		if d := p.Default; d != nil {
			rows = append(rows, modelRow{"PLogP default (L)", "1", formatSeconds(d.LS), "–"})
		}
		for _, part := range []struct {
			name string
			es   []model.PLogPEntry
		}{{"PLogP rank pairs (L)", p.Pairs}, {"PLogP group pairs (L)", p.GroupPairs}} {
			if len(part.es) == 0 {
				continue
			}
			var l []float64
			for _, e := range part.es {
				l = append(l, e.LS)
			}
			rows = append(rows, modelRow{part.name, fmt.Sprint(len(part.es)), rng(l, formatSeconds), "–"})
		}
	}
	return rows
}

func bwOrDash(b float64) string {
	if b <= 0 {
		return "–"
	}
	return formatBandwidth(b)
}

// view is what the page template reads.
type view struct {
	In             Input
	Size           int
	Dist           *Distance
	TreeSVG        template.HTML
	TreeFromLevels bool
	TreeBoxes      bool // some ranks are folded into boxes
	TreeBW         bool // some edge carries a bandwidth
	Heatmap        template.URL
	HeatLog        bool
	HeatRange      string
	HeatGaps       bool // some pairs have no value (drawn grey)
	Dendrogram     template.URL
	Cuts           []CutLine
	Linkage        string
	Levels         []LevelStats
	HaveRTT        bool
	HaveBW         bool
	Cost           []costRow
	Acc            *Accuracy
	Model          []modelRow
	Notes          []string
}

// Method is "name (k=v, ...)".
func (v *view) Method() string {
	m := v.In.Topology.Method
	if m == nil {
		return "not recorded"
	}
	var ps []string
	for k, val := range m.Params {
		ps = append(ps, fmt.Sprintf("%s=%v", k, val))
	}
	sort.Strings(ps)
	if len(ps) == 0 {
		return m.Name
	}
	return m.Name + " (" + strings.Join(ps, ", ") + ")"
}

// World describes where the data came from.
func (v *view) World() string {
	ds := v.In.Dataset
	if ds == nil {
		return ""
	}
	s := ds.World.Kind
	if ds.World.Platform != "" {
		s += " · platform " + ds.World.Platform
	}
	switch {
	case ds.World.Noise && ds.World.NoiseSeed != 0:
		s += fmt.Sprintf(" · noise seed %d", ds.World.NoiseSeed)
	case ds.World.Noise:
		s += " · with noise"
	}
	return s
}

// LevelChain is "socket (16) → host (8) → all (1)".
func (v *view) LevelChain() string {
	var parts []string
	for _, l := range v.In.Topology.Levels {
		parts = append(parts, fmt.Sprintf("%s (%d)", l.Name, len(l.Groups)))
	}
	return strings.Join(parts, " → ")
}

// Coverage is the share of rank pairs measured, for the header.
func (v *view) Coverage() string {
	if m := v.In.Topology.Measurements; m != nil && m.PairsTotal > 0 {
		return fmt.Sprintf("%.1f %%", 100*float64(m.PairsMeasured)/float64(m.PairsTotal))
	}
	return ""
}

// MeanNMI is the mean NMI over truth levels, for the header.
func (v *view) MeanNMI() string {
	if v.Acc == nil || len(v.Acc.Levels) == 0 {
		return ""
	}
	s := 0.0
	for _, l := range v.Acc.Levels {
		s += l.NMI
	}
	return fmt.Sprintf("%.3f", s/float64(len(v.Acc.Levels)))
}
