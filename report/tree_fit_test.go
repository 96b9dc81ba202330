package report

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"testing"

	"netaware/topo"
)

var (
	svgSize = regexp.MustCompile(`viewBox="0 0 ([0-9.]+) ([0-9.]+)"`)
	svgBox  = regexp.MustCompile(`<rect class="bx" x="([-0-9.]+)" y="[-0-9.]+" width="([0-9.]+)" height="34" rx="6"/><text class="bxt" x="[-0-9.]+" y="[-0-9.]+" text-anchor="middle">([^<]*)</text><text class="bxs" x="[-0-9.]+" y="[-0-9.]+" text-anchor="middle">([^<]*)</text>`)
	svgEdge = regexp.MustCompile(`<text class="el" x="([-0-9.]+)" y="[-0-9.]+" text-anchor="(start|middle)">([^<]*)</text>`)
)

// TestTreeTextsFitTheirBoxes: no box text spills out of its box and no
// edge label out of the drawing (the report's tree showed "r48-r63 · 21.9
// µs–28.3 µs · 125 MB/s · 1 sw" across a 180 px box and into the ranks
// beside it, and a switch's "each ..." label cut at the drawing's edge),
// at 64 ranks with noisy links of every kind, 512 and 4096 ranks.
func TestTreeTextsFitTheirBoxes(t *testing.T) {
	// testdata/grid5000-discovered.json is 'netaware discover -q' on the
	// default platform, whose tree showed both faults.
	found, err := topo.ReadFile("testdata/grid5000-discovered.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, tp := range map[string]*topo.Topology{
		"grid5000-discovered": found,
		"2x2x16-noisy":        fixture{sites: 2, switches: 2, ranksPer: 16, noise: 0.05, seed: 3}.topology(),
		"4x4x32-noisy":        fixture{sites: 4, switches: 4, ranksPer: 32, noise: 0.05, seed: 5}.topology(),
		"4x16x64":             fixture{sites: 4, switches: 16, ranksPer: 64}.topology(),
	} {
		t.Run(name, func(t *testing.T) {
			root, err := treeFromTopology(tp)
			if err != nil {
				t.Fatal(err)
			}
			svg := string(treeSVG(root, func(r int) string { return fmt.Sprint(r) }))
			size := svgSize.FindStringSubmatch(svg)
			width, _ := strconv.ParseFloat(size[1], 64)
			boxes := svgBox.FindAllStringSubmatch(svg, -1)
			if len(boxes) == 0 {
				t.Fatal("no boxes drawn")
			}
			for _, b := range boxes {
				x, _ := strconv.ParseFloat(b[1], 64)
				w, _ := strconv.ParseFloat(b[2], 64)
				title, sub := html.UnescapeString(b[3]), html.UnescapeString(b[4])
				if need := max(textWidth(title, fontTitle), textWidth(sub, fontSmall)); need > w-4 {
					t.Errorf("box %q / %q needs %.0f px, drawn %.0f px wide", title, sub, need, w)
				}
				if x < 0 || x+w > width {
					t.Errorf("box %q at %.0f-%.0f outside the drawing's 0-%.0f", title, x, x+w, width)
				}
			}
			for _, e := range svgEdge.FindAllStringSubmatch(svg, -1) {
				x, _ := strconv.ParseFloat(e[1], 64)
				w := textWidth(html.UnescapeString(e[3]), fontEdge)
				lo, hi := x, x+w
				if e[2] == "middle" {
					lo, hi = x-w/2, x+w/2
				}
				if lo < 0 || hi > width {
					t.Errorf("edge label %q spans %.0f-%.0f, the drawing 0-%.0f", e[3], lo, hi, width)
				}
			}
		})
	}
}
