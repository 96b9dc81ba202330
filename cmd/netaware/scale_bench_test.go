package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"netaware/platform"
	"netaware/topo"
)

// BenchmarkDiscoverScale is issue 18's scaling family: netaware discover
// on generated two-level and three-level clusters of 256 to 16,384 ranks,
// at the fast and standard levels, blind and with host names. Each run is
// one process of the built command, so that its CPU time and peak RSS are
// its own (getrusage of the child); virtual time and pairs measured come
// from its topology.json. From the second size of a family on, each run
// also reports the growth exponents fitted over the family's sizes so far
// (least squares on log-log): cpu-exp, rss-exp and pairs-exp against the
// ranks, cpu-pairs-exp of CPU time against the pairs.
//
// Opt-in, it takes minutes to hours (docs/scaling.md has the figures):
//
//	NETAWARE_SCALE_BENCH=1 go test ./cmd/netaware -run '^$' -benchtime 1x \
//	    -bench 'DiscoverScale/two-level/fast/named' -timeout 2h
//
// NETAWARE_SCALE_SIZES (default 256,1024,4096,16384) chooses the sizes.
func BenchmarkDiscoverScale(b *testing.B) {
	if os.Getenv("NETAWARE_SCALE_BENCH") == "" {
		b.Skip("set NETAWARE_SCALE_BENCH=1: runs discover on up to 16,384 simulated ranks")
	}
	sizes, err := parseSizes(os.Getenv("NETAWARE_SCALE_SIZES"))
	if err != nil {
		b.Fatal(err)
	}
	bin := netawareBinary(b)
	dir := b.TempDir()
	for _, shape := range []string{"two-level", "three-level"} {
		b.Run(shape, func(b *testing.B) {
			for _, level := range []string{"fast", "standard"} {
				b.Run(level, func(b *testing.B) {
					for _, mode := range []string{"named", "blind"} {
						b.Run(mode, func(b *testing.B) {
							var runs []scaleRun
							for _, n := range sizes {
								b.Run(strconv.Itoa(n), func(b *testing.B) {
									plat, err := writeScalePlatform(dir, shape, n)
									if err != nil {
										b.Fatal(err)
									}
									var r scaleRun
									for range b.N {
										if r, err = runScale(bin, plat, level, mode == "blind", filepath.Join(dir, "out")); err != nil {
											b.Fatal(err)
										}
									}
									runs = append(runs, r)
									b.ReportMetric(r.cpu.Seconds(), "cpu-s/op")
									b.ReportMetric(float64(r.peakRSS)/(1<<20), "peak-MB")
									b.ReportMetric(r.virtual, "virtual-s")
									b.ReportMetric(float64(r.pairs), "pairs")
									b.ReportMetric(r.wall.Seconds(), "wall-s/op")
									if len(runs) >= 2 {
										// Fitted over this family's sizes so far.
										g := growth(runs)
										b.ReportMetric(g.cpu, "cpu-exp")
										b.ReportMetric(g.rss, "rss-exp")
										b.ReportMetric(g.pairs, "pairs-exp")
										b.ReportMetric(g.cpuPerPair, "cpu-pairs-exp")
									}
								})
							}
						})
					}
				})
			}
		})
	}
}

// scaleRun is one discover process's cost.
type scaleRun struct {
	ranks   int
	wall    time.Duration
	cpu     time.Duration // user + system
	peakRSS int64         // bytes
	virtual float64       // seconds of simulated time
	pairs   int
}

// parseSizes reads a comma-separated list of rank counts, multiples of 32
// (hosts of 16 or 32 cores).
func parseSizes(s string) ([]int, error) {
	if s == "" {
		return []int{256, 1024, 4096, 16384}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 64 || n%32 != 0 {
			return nil, fmt.Errorf("NETAWARE_SCALE_SIZES: %q: want rank counts, multiples of 32, at least 64", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// scaleSpec is the generated cluster of a family at n ranks: two levels
// as platform.TwoLevelCluster (16 cores per host, 8 hosts per leaf); three
// levels as testdata/scale/three-level-4096.yaml (32 cores per host, 4
// leaf switches under 2 spines), its leaves growing with n.
func scaleSpec(shape string, n int) platform.ClusterSpec {
	if shape == "two-level" {
		return platform.TwoLevelCluster(n / 16)
	}
	hosts := n / 32
	return platform.ClusterSpec{Name: fmt.Sprintf("three-level-%d", n), Hosts: hosts, HostsPerLeaf: max(1, hosts/4), LeavesPerSpine: 2,
		Sockets: 2, CoresPerSocket: 16, NICBandwidth: "1Gbps", NICLatency: "5us", Jitter: 0.02, Seed: 1}
}

func writeScalePlatform(dir, shape string, n int) (string, error) {
	y, err := scaleSpec(shape, n).YAML()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", shape, n))
	return path, os.WriteFile(path, y, 0o644)
}

// runScale runs one discovery and reads its cost.
func runScale(bin, plat, level string, blind bool, out string) (scaleRun, error) {
	if err := os.RemoveAll(out); err != nil {
		return scaleRun{}, err
	}
	args := []string{"discover", "-q", "--platform", plat, "--level", level, "--out", out}
	if blind {
		args = append(args, "--blind")
	}
	cmd := exec.Command(bin, args...)
	start := time.Now()
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return scaleRun{}, fmt.Errorf("netaware %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	r := scaleRun{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.peakRSS = int64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	b, err := os.ReadFile(filepath.Join(out, "topology.json"))
	if err != nil {
		return r, err
	}
	var t topo.Topology
	if err := json.Unmarshal(b, &t); err != nil {
		return r, fmt.Errorf("%s/topology.json: %w", out, err)
	}
	r.ranks = t.Size
	if m := t.Measurements; m != nil {
		r.virtual, r.pairs = m.VirtualTimeS, m.PairsMeasured
	}
	return r, nil
}

// growthExponent is the slope of log y over log x by least squares: y
// grows as x^slope. Points with x or y not positive are left out; NaN
// when fewer than two remain.
func growthExponent(x, y []float64) float64 {
	var lx, ly []float64
	for i := range x {
		if x[i] > 0 && y[i] > 0 {
			lx = append(lx, math.Log(x[i]))
			ly = append(ly, math.Log(y[i]))
		}
	}
	if len(lx) < 2 {
		return math.NaN()
	}
	_, slope := stat.LinearRegression(lx, ly, nil, false)
	return slope
}

// exponents are a family's growth: CPU time, peak RSS and pairs against
// the ranks, and CPU time against the pairs.
type exponents struct{ cpu, rss, pairs, cpuPerPair float64 }

func growth(runs []scaleRun) exponents {
	var n, cpu, rss, pairs []float64
	for _, r := range runs {
		n = append(n, float64(r.ranks))
		cpu = append(cpu, r.cpu.Seconds())
		rss = append(rss, float64(r.peakRSS))
		pairs = append(pairs, float64(r.pairs))
	}
	return exponents{growthExponent(n, cpu), growthExponent(n, rss), growthExponent(n, pairs), growthExponent(pairs, cpu)}
}

// TestGrowthExponent: exact power laws give their exponent, points that
// cannot be logged are left out.
func TestGrowthExponent(t *testing.T) {
	x := []float64{256, 1024, 4096, 16384}
	for _, k := range []float64{1, 2, 1.5, 0} {
		y := make([]float64, len(x))
		for i := range x {
			y[i] = 3 * math.Pow(x[i], k)
		}
		if got := growthExponent(x, y); math.Abs(got-k) > 1e-9 {
			t.Errorf("y = 3 x^%g: exponent %g", k, got)
		}
	}
	// 2x per 4x of x, with one run that failed to report (0).
	if got := growthExponent([]float64{1, 4, 16, 64}, []float64{1, 2, 0, 8}); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("square root with a zero: exponent %g", got)
	}
	g := growth([]scaleRun{{ranks: 256, cpu: time.Second, peakRSS: 1 << 20, pairs: 100}, {ranks: 1024, cpu: 16 * time.Second, peakRSS: 4 << 20, pairs: 400}})
	want := exponents{2, 1, 1, 2}
	if math.Abs(g.cpu-want.cpu)+math.Abs(g.rss-want.rss)+math.Abs(g.pairs-want.pairs)+math.Abs(g.cpuPerPair-want.cpuPerPair) > 1e-9 {
		t.Errorf("growth of 4x the ranks, 16x CPU, 4x RSS and pairs: %+v", g)
	}
	if got := growthExponent([]float64{1}, []float64{1}); !math.IsNaN(got) {
		t.Errorf("one point: exponent %g, want NaN", got)
	}
	if _, err := parseSizes("256, 1000"); err == nil {
		t.Error("1000 ranks (not a multiple of 32) accepted")
	}
	if s, err := parseSizes(""); err != nil || len(s) != 4 || s[3] != 16384 {
		t.Errorf("default sizes %v, %v", s, err)
	}
	for _, shape := range []string{"two-level", "three-level"} {
		for _, n := range []int{256, 4096} {
			spec := scaleSpec(shape, n)
			if got := spec.Hosts * spec.Sockets * spec.CoresPerSocket; got != n {
				t.Errorf("%s at %d ranks: %d ranks generated", shape, n, got)
			}
		}
	}
}
