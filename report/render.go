package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"netaware/units"
)

// viridisStops are the colours of the perceptually uniform "viridis" map
// at 0, 0.1, ..., 1: dark = near, bright = far, readable in grey print
// and by colour-blind readers.
var viridisStops = [...]color.RGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x48, 0x24, 0x75, 0xff}, {0x41, 0x44, 0x87, 0xff},
	{0x35, 0x5f, 0x8d, 0xff}, {0x2a, 0x78, 0x8e, 0xff}, {0x21, 0x91, 0x8c, 0xff},
	{0x22, 0xa8, 0x84, 0xff}, {0x44, 0xbf, 0x70, 0xff}, {0x7a, 0xd1, 0x51, 0xff},
	{0xbd, 0xdf, 0x26, 0xff}, {0xfd, 0xe7, 0x25, 0xff},
}

// missingColor marks unmeasured pairs in the heat map.
var missingColor = color.RGBA{0xd8, 0xd8, 0xd8, 0xff}

// viridis maps t in [0, 1] (clamped) to a colour.
func viridis(t float64) color.RGBA {
	if math.IsNaN(t) {
		return missingColor
	}
	t = math.Max(0, math.Min(1, t))
	f := t * float64(len(viridisStops)-1)
	i := int(f)
	if i >= len(viridisStops)-1 {
		return viridisStops[len(viridisStops)-1]
	}
	a, b, w := viridisStops[i], viridisStops[i+1], f-float64(i)
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-w) + float64(y)*w)) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// sansFonts switches every text of p to Liberation Sans: the serif default
// looks out of place next to the report's typography.
func sansFonts(p *plot.Plot) {
	sans := func(f *font.Font) { f.Typeface, f.Variant = "Liberation", "Sans" }
	sans(&p.Title.TextStyle.Font)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		sans(&a.Label.TextStyle.Font)
		sans(&a.Tick.Label.Font)
	}
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
}

// figure is something drawn onto a canvas of a given size: a single plot or
// a composition (heat map + colour bar).
type figure struct {
	w, h vg.Length
	draw func(c draw.Canvas)
}

// render encodes f as "png" (at 2x resolution, for sharp display on high
// density screens and in print) or "svg".
func (f figure) render(format string) (out []byte, err error) {
	// gonum/plot panics on degenerate ranges and styles rather than
	// returning errors; a report must fail with a message instead.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%s: drawing failed: %v", format, r)
		}
	}()
	var buf bytes.Buffer
	switch format {
	case "png":
		c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(144), vgimg.UseBackgroundColor(color.White))}
		f.draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("png: %w", err)
		}
	case "svg":
		c := vgsvg.New(f.w, f.h)
		dc := draw.New(c)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		f.draw(dc)
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("svg: %w", err)
		}
		// Rasters must fill the rectangle gonum computed for them; SVG's
		// default keeps the aspect ratio and letterboxes, which would
		// shift the heat map against its grid and shrink the colour bar.
		return bytes.ReplaceAll(buf.Bytes(), []byte("<image "), []byte(`<image preserveAspectRatio="none" style="image-rendering:pixelated" `)), nil
	default:
		return nil, fmt.Errorf("unknown image format %q", format)
	}
	return buf.Bytes(), nil
}

func plotFigure(p *plot.Plot, w, h vg.Length) figure {
	return figure{w: w, h: h, draw: p.Draw}
}

// unitTicks labels an axis in a physical unit. On a log axis it puts major
// ticks at powers of ten and minor ones at 2x and 5x.
type unitTicks struct {
	log  bool
	unit func(float64) string
}

// Ticks implements plot.Ticker.
func (u unitTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	if !u.log {
		ts := plot.DefaultTicks{}.Ticks(lo, hi)
		for i := range ts {
			if ts[i].Label != "" {
				ts[i].Label = u.unit(ts[i].Value)
			}
		}
		return ts
	}
	var ts []plot.Tick
	if !(lo > 0) || !(hi > lo) {
		return ts
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || hi/lo < 1000 {
				t.Label = u.unit(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// formatSeconds prints a duration as every netaware table does
// (units.FormatTime: 1.23us, 45.6ms), "–" for an unknown one.
func formatSeconds(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return units.FormatTime(s)
}

// formatBandwidth prints bytes per second as every netaware table does, in
// bits per second (units.FormatBandwidth: 10Gbps), "–" for an unknown one.
func formatBandwidth(bps float64) string {
	if math.IsNaN(bps) {
		return "–"
	}
	return units.FormatBandwidth(bps)
}

func siFormat(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	if v == 0 {
		return "0 " + unit
	}
	prefixes := []struct {
		p string
		f float64
	}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"", 1}, {"m", 1e-3}, {"µ", 1e-6}, {"n", 1e-9}, {"p", 1e-12}}
	a := math.Abs(v)
	for _, p := range prefixes {
		if a >= p.f*0.9995 || p.p == "p" {
			return trimNum(v/p.f) + " " + p.p + unit
		}
	}
	return trimNum(v) + " " + unit
}

// trimNum prints 3 significant digits without trailing zeros.
func trimNum(v float64) string {
	s := strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(math.Abs(v))))), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
