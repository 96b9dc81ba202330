// Command validate compares netaware's flow model (package netsim) with
// SimGrid's CM02 model on random concurrent point-to-point patterns.
//
// It writes, for each pattern, a SimGrid platform (one SimGrid host per rank,
// one SHARED link per netsim resource, a private FATPIPE latency link per
// ordered pair, explicit routes), runs the flows program built from
// tools/simgrid/flows.cpp, runs the same flows through netsim, and prints a
// Markdown table of the per-flow relative differences.
//
//	g++ -O2 -std=c++17 -o /tmp/sgflows tools/simgrid/flows.cpp -lsimgrid
//	go run ./tools/simgrid/validate -flows /tmp/sgflows -platform zhu-2racks -patterns 20
//
// With -bcast it instead times a binomial broadcast in comm/sim and in
// SimGrid (tools/simgrid/bcast.cpp):
//
//	g++ -O2 -std=c++17 -o /tmp/sgbcast tools/simgrid/bcast.cpp -lsimgrid
//	go run ./tools/simgrid/validate -bcast /tmp/sgbcast -platform dichev-n1
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"netaware/internal/atomicfile"
	"netaware/netsim"
	"netaware/platform"
)

var sgPrecision = "1e-11"

type flow struct {
	id       int
	src, dst int
	bytes    int64
	start    float64
}

func main() {
	flowsBin := flag.String("flows", "/tmp/sgflows", "the SimGrid flows program (tools/simgrid/flows.cpp)")
	plats := flag.String("platform", "zhu-2racks", "comma-separated platform names or files")
	npat := flag.Int("patterns", 20, "random patterns per platform")
	seed := flag.Uint64("seed", 1, "pattern generator seed")
	maxFlows := flag.Int("max-flows", 40, "largest number of flows in a pattern")
	tol := flag.Float64("tolerance", 0.02, "largest accepted relative difference")
	keep := flag.String("keep", "", "directory to keep the generated XML and patterns in")
	bcastBin := flag.String("bcast", "", "instead of patterns: time a binomial broadcast in comm/sim and in this SimGrid bcast program (tools/simgrid/bcast.cpp)")
	bcastSize := flag.Int("bcast-bytes", 64<<20, "broadcast size for -bcast")
	reps := flag.Int("reps", 5, "-bcast: runs of each simulator (the fastest counts)")
	flag.StringVar(&sgPrecision, "sg-precision", "1e-11", "SimGrid's surf/precision and maxmin/precision (raise it if SimGrid aborts on rounding)")
	flag.Parse()
	if *bcastBin != "" {
		for _, name := range strings.Split(*plats, ",") {
			p, err := platform.Load(name)
			if err == nil {
				err = compareBcast(p.WithoutNoise(), name, *bcastBin, *bcastSize, max(1, *reps))
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "validate:", err)
				os.Exit(1)
			}
		}
		return
	}
	ok := true
	for _, name := range strings.Split(*plats, ",") {
		p, err := platform.Load(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "validate:", err)
			os.Exit(1)
		}
		p = p.WithoutNoise()
		good, err := validate(p, name, *flowsBin, *npat, *seed, *maxFlows, *tol, *keep)
		if err != nil {
			fmt.Fprintln(os.Stderr, "validate:", err)
			os.Exit(1)
		}
		ok = ok && good
	}
	if !ok {
		os.Exit(1)
	}
}

func validate(p *platform.Platform, name, bin string, npat int, seed uint64, maxFlows int, tol float64, keep string) (bool, error) {
	rng := rand.New(rand.NewPCG(seed, uint64(len(name))))
	fmt.Printf("\n### %s (%d ranks)\n\n", name, p.NumRanks())
	fmt.Println("| pattern | flows | starts | netsim makespan (s) | SimGrid makespan (s) | max rel. diff | mean rel. diff | netsim wall | SimGrid wall |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	allOK := true
	worst := 0.0
	for i := 0; i < npat; i++ {
		flows := randomPattern(p, rng, maxFlows, i%2 == 1)
		t0 := time.Now()
		ours, err := runNetsim(p, flows)
		if err != nil {
			return false, err
		}
		ourWall := time.Since(t0)
		dir, err := os.MkdirTemp("", "sgval")
		if err != nil {
			return false, err
		}
		if keep != "" {
			dir = filepath.Join(keep, fmt.Sprintf("%s-%02d", filepath.Base(name), i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return false, err
			}
		}
		t1 := time.Now()
		theirs, err := runSimGrid(p, flows, bin, dir)
		sgWall := time.Since(t1)
		if keep == "" {
			os.RemoveAll(dir)
		}
		if err != nil {
			return false, fmt.Errorf("pattern %d: %w", i, err)
		}
		maxRel, sumRel := 0.0, 0.0
		mo, mt := 0.0, 0.0
		for _, f := range flows {
			a, b := ours[f.id], theirs[f.id]
			// Compare durations (completion minus start), the quantity a
			// user reads off a measurement.
			da, db := a-f.start, b-f.start
			rel := math.Abs(da-db) / db
			maxRel = math.Max(maxRel, rel)
			sumRel += rel
			mo, mt = math.Max(mo, a), math.Max(mt, b)
		}
		worst = math.Max(worst, maxRel)
		starts := "together"
		if i%2 == 1 {
			starts = "staggered"
		}
		mark := ""
		if maxRel > tol {
			mark = " **FAIL**"
			allOK = false
		}
		fmt.Printf("| %d | %d | %s | %.6f | %.6f | %.2e%s | %.2e | %v | %v |\n", i, len(flows), starts, mo, mt, maxRel, mark,
			sumRel/float64(len(flows)), ourWall.Round(time.Microsecond), sgWall.Round(time.Millisecond))
	}
	fmt.Printf("\nworst per-flow relative difference on %s: %.3e (tolerance %.0e)\n", name, worst, tol)
	return allOK, nil
}

// randomPattern draws 2..maxFlows flows between ranks on different hosts,
// with sizes from 10 kB to 50 MB, all starting at 0 or staggered over 50 ms.
func randomPattern(p *platform.Platform, rng *rand.Rand, maxFlows int, staggered bool) []flow {
	n := p.NumRanks()
	k := 2 + rng.IntN(maxFlows-1)
	var out []flow
	for len(out) < k {
		s, d := rng.IntN(n), rng.IntN(n)
		if p.RankHost(s) == p.RankHost(d) {
			continue
		}
		size := int64(math.Exp(math.Log(1e4) + rng.Float64()*(math.Log(5e7)-math.Log(1e4))))
		st := 0.0
		if staggered {
			st = math.Round(rng.Float64()*50e3) / 1e6
		}
		out = append(out, flow{id: len(out), src: s, dst: d, bytes: size, start: st})
	}
	return out
}

func runNetsim(p *platform.Platform, flows []flow) (map[int]float64, error) {
	res := p.Resources()
	nres := make([]netsim.Resource, len(res))
	for i, r := range res {
		nres[i] = netsim.Resource{Name: r.Name, Bps: r.BandwidthBps}
	}
	tcp := p.TCP()
	n, err := netsim.New(netsim.Config{Resources: nres, Weighting: netsim.RTTWeighted, CrossTraffic: tcp.CrossTraffic, WindowBytes: tcp.WindowBytes})
	if err != nil {
		return nil, err
	}
	order := append([]flow(nil), flows...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].start < order[j].start })
	done := map[int]float64{}
	collect := func() {
		for _, e := range n.Step() {
			if e.Kind == netsim.Done {
				done[e.Flow.Data().(int)] = e.Time
			}
		}
	}
	for _, f := range order {
		for {
			t, ok := n.NextTime()
			if !ok || t >= f.start {
				break
			}
			collect()
		}
		if err := n.SetNow(f.start); err != nil {
			return nil, err
		}
		r := p.Route(f.src, f.dst)
		if _, err := n.Start(netsim.FlowSpec{Bytes: f.bytes, LatencyS: r.LatencyS, Forward: r.Forward, Reverse: r.Reverse, Data: f.id}); err != nil {
			return nil, err
		}
	}
	for n.Pending() > 0 {
		collect()
	}
	return done, nil
}

// simgridXML writes the platform restricted to the routes the flows use
// (both directions, since SimGrid's crosstraffic loads the back route).
func simgridXML(p *platform.Platform, flows []flow) (string, error) {
	var prs []pair
	for _, f := range flows {
		prs = append(prs, pair{f.src, f.dst}, pair{f.dst, f.src})
	}
	return simgridXMLPairs(p, prs)
}

type pair struct{ s, d int }

// simgridXMLPairs writes one SimGrid host per rank named in prs, one SHARED
// link per netsim resource, and for each ordered pair a private FATPIPE link
// carrying the route's latency followed by the route's resources.
func simgridXMLPairs(p *platform.Platform, prs []pair) (string, error) {
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n<zone id=\"world\" routing=\"Full\">\n")
	used := map[int]bool{}
	pairs := map[pair]bool{}
	for _, pr := range prs {
		used[pr.s], used[pr.d] = true, true
		pairs[pr] = true
	}
	var ranks []int
	for r := range used {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	for _, r := range ranks {
		fmt.Fprintf(&b, "  <host id=\"r%d\" speed=\"1Gf\"/>\n", r)
	}
	for i, r := range p.Resources() {
		fmt.Fprintf(&b, "  <link id=\"res%d\" bandwidth=\"%sBps\" latency=\"0s\"/> <!-- %s -->\n", i,
			strconv.FormatFloat(r.BandwidthBps, 'g', -1, 64), r.Name)
	}
	var plist []pair
	for pr := range pairs {
		plist = append(plist, pr)
	}
	sort.Slice(plist, func(i, j int) bool {
		if plist[i].s != plist[j].s {
			return plist[i].s < plist[j].s
		}
		return plist[i].d < plist[j].d
	})
	// SimGrid wants every link declared before the first route.
	var routes bytes.Buffer
	for _, pr := range plist {
		r := p.Route(pr.s, pr.d)
		back := p.Route(pr.d, pr.s)
		if !sameInts(r.Reverse, back.Forward) {
			return "", fmt.Errorf("route %d->%d: reverse path %v differs from the route back %v; SimGrid cannot express it", pr.s, pr.d, r.Reverse, back.Forward)
		}
		fmt.Fprintf(&b, "  <link id=\"lat%d_%d\" bandwidth=\"1e15Bps\" latency=\"%ss\" sharing_policy=\"FATPIPE\"/>\n", pr.s, pr.d,
			strconv.FormatFloat(r.LatencyS, 'g', -1, 64))
		fmt.Fprintf(&routes, "  <route src=\"r%d\" dst=\"r%d\" symmetrical=\"NO\"><link_ctn id=\"lat%d_%d\"/>", pr.s, pr.d, pr.s, pr.d)
		for _, x := range r.Forward {
			fmt.Fprintf(&routes, "<link_ctn id=\"res%d\"/>", x)
		}
		routes.WriteString("</route>\n")
	}
	b.Write(routes.Bytes())
	b.WriteString("</zone>\n</platform>\n")
	return b.String(), nil
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func runSimGrid(p *platform.Platform, flows []flow, bin, dir string) (map[int]float64, error) {
	xml, err := simgridXML(p, flows)
	if err != nil {
		return nil, err
	}
	xmlPath := filepath.Join(dir, "platform.xml")
	patPath := filepath.Join(dir, "pattern.txt")
	if err := atomicfile.WriteFile(xmlPath, []byte(xml)); err != nil {
		return nil, err
	}
	var pat bytes.Buffer
	for _, f := range flows {
		fmt.Fprintf(&pat, "%d r%d r%d %d %s\n", f.id, f.src, f.dst, f.bytes, strconv.FormatFloat(f.start, 'g', -1, 64))
	}
	if err := atomicfile.WriteFile(patPath, pat.Bytes()); err != nil {
		return nil, err
	}
	tcp := p.TCP()
	cmd := exec.Command(bin, xmlPath, patPath,
		"--cfg=network/model:CM02",
		"--cfg=network/crosstraffic:"+boolStr(tcp.CrossTraffic > 0),
		fmt.Sprintf("--cfg=network/TCP-gamma:%d", tcp.WindowBytes),
		"--cfg=network/weight-S:0",
		"--cfg=network/latency-factor:1",
		"--cfg=network/bandwidth-factor:1",
		"--cfg=surf/precision:"+sgPrecision,
		"--cfg=maxmin/precision:"+sgPrecision,
		"--log=root.thres:critical")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", bin, err, stderr.String())
	}
	done := map[int]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var id int
		var t float64
		if _, err := fmt.Sscan(sc.Text(), &id, &t); err != nil {
			return nil, fmt.Errorf("flows output %q: %w", sc.Text(), err)
		}
		done[id] = t
	}
	if len(done) != len(flows) {
		return nil, fmt.Errorf("flows printed %d completions for %d flows: %s", len(done), len(flows), stderr.String())
	}
	return done, nil
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
