package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromiumFlags keep headless Chromium off the network and out of the
// user's profile.
func chromiumFlags(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"}
}

// consoleErrors returns the lines of a Chromium log that report a
// JavaScript error or a console error.
func consoleErrors(log string) []string {
	var bad []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "Uncaught") || strings.Contains(l, "ERROR:CONSOLE") || strings.Contains(l, ":CONSOLE(") {
			bad = append(bad, l)
		}
	}
	return bad
}

// TestReportScreenshot renders the fixture report in headless Chromium
// (scripts/screenshot-report.sh) and checks the picture: requested size,
// not blank, the heat map's colours present, no console errors; and that
// the DOM Chromium built has every section. Skipped without chromium.
func TestReportScreenshot(t *testing.T) {
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	in := fixture{sites: 2, switches: 2, ranksPer: 8, noise: 0.05, seed: 1}.input()
	if _, _, err := WriteDir(dir, in); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	script, err := filepath.Abs("../scripts/screenshot-report.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sh", script, page, shot, "1400,3000")
	cmd.Env = append(os.Environ(), "CHROMIUM="+chrome)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("screenshot: %v\n%s\n%s", err, out, stderr.String())
	}
	if bad := consoleErrors(stderr.String()); len(bad) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(bad, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 3000 {
		t.Fatalf("screenshot is %dx%d, want 1400x3000", b.Dx(), b.Dy())
	}
	st := pixelStats(img)
	t.Logf("luma sd %.1f, %d distinct colours, %d dark-viridis and %d yellow-viridis pixels", st.sd, st.colours, st.dark, st.yellow)
	if st.sd < 15 {
		t.Errorf("screenshot is nearly blank: luminance sd %.1f", st.sd)
	}
	if st.colours < 200 {
		t.Errorf("only %d distinct colours", st.colours)
	}
	// The fixture's heat map is a quarter dark (same switch) and half
	// yellow (other site); at 1400 px both cover well over 10 000 pixels.
	if st.dark < 10000 || st.yellow < 10000 {
		t.Errorf("heat map colours missing: %d dark, %d yellow pixels", st.dark, st.yellow)
	}

	// The DOM as Chromium built it has every section.
	profile := t.TempDir()
	dump := exec.CommandContext(ctx, chrome, append(chromiumFlags(profile), "--dump-dom", "file://"+page)...)
	var dstderr bytes.Buffer
	dump.Stderr = &dstderr
	dom, err := dump.Output()
	if err != nil {
		t.Fatalf("dump-dom: %v\n%s", err, dstderr.String())
	}
	for _, id := range []string{"summary", "tree", "levels", "heatmap", "dendrogram", "cost", "accuracy"} {
		if !bytes.Contains(dom, []byte(`<section id="`+id+`"`)) {
			t.Errorf("rendered DOM lacks section %q", id)
		}
	}
	if bad := consoleErrors(dstderr.String()); len(bad) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(bad, "\n"))
	}
}

type stats struct {
	sd                    float64
	colours, dark, yellow int
}

// pixelStats: luminance standard deviation, distinct colours, and pixels
// near viridis' two ends (the heat map's near and far pairs).
func pixelStats(img image.Image) stats {
	var s stats
	seen := map[uint32]bool{}
	var sum, sum2 float64
	b := img.Bounds()
	near := func(r, g, bl uint32, c [3]uint32) bool {
		d := func(x, y uint32) float64 { return math.Abs(float64(x>>8) - float64(y)) }
		return d(r, c[0]) < 24 && d(g, c[1]) < 24 && d(bl, c[2]) < 24
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
			l := 0.2126*float64(r>>8) + 0.7152*float64(g>>8) + 0.0722*float64(bl>>8)
			sum += l
			sum2 += l * l
			if near(r, g, bl, [3]uint32{0x44, 0x01, 0x54}) {
				s.dark++
			}
			if near(r, g, bl, [3]uint32{0xfd, 0xe7, 0x25}) {
				s.yellow++
			}
		}
	}
	n := float64(b.Dx() * b.Dy())
	mean := sum / n
	s.sd = math.Sqrt(math.Max(0, sum2/n-mean*mean))
	s.colours = len(seen)
	return s
}
