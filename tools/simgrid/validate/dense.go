package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"netaware/netsim"
	"netaware/platform"
)

// The dense pattern: every one of the first `ranks` ranks runs `lanes`
// lanes, and a lane sends `seq` flows one after the other (each starts when
// the previous one completed), so ranks x lanes flows are in flight at
// once, alltoall-like: lane k of rank i sends its j-th flow to rank
// (i + 1 + k + lanes*j) mod ranks. Sizes are log-uniform in 100 kB - 2 MB.
// netsim and SimGrid (tools/simgrid/lanes.cpp) run the same lanes; the
// tool compares every flow's completion time and the CPU time each needs.

type laneFlow struct {
	id, lane, src, dst int
	bytes              int64
}

func densePattern(p *platform.Platform, rng *rand.Rand, ranks, lanes, seq int) ([][]laneFlow, error) {
	if ranks > p.NumRanks() || ranks < 2 {
		return nil, fmt.Errorf("dense pattern: %d ranks, platform has %d", ranks, p.NumRanks())
	}
	var out [][]laneFlow
	id := 0
	for i := range ranks {
		for k := range lanes {
			var lane []laneFlow
			for j := range seq {
				d := (i + 1 + k + lanes*j) % ranks
				if p.RankHost(d) == p.RankHost(i) {
					d = (d + 1) % ranks
				}
				if p.RankHost(d) == p.RankHost(i) {
					return nil, fmt.Errorf("dense pattern: ranks %d and %d share a host; use a platform with one rank per host", i, d)
				}
				size := int64(math.Exp(math.Log(1e5) + rng.Float64()*(math.Log(2e6)-math.Log(1e5))))
				lane = append(lane, laneFlow{id: id, lane: len(out), src: i, dst: d, bytes: size})
				id++
			}
			out = append(out, lane)
		}
	}
	return out, nil
}

// runNetsimLanes runs the lanes through netsim and returns each flow's
// completion time and the number of flow events delivered.
func runNetsimLanes(p *platform.Platform, lanes [][]laneFlow) (map[int]float64, int64, error) {
	res := p.Resources()
	nres := make([]netsim.Resource, len(res))
	for i, r := range res {
		nres[i] = netsim.Resource{Name: r.Name, Bps: r.BandwidthBps}
	}
	tcp := p.TCP()
	n, err := netsim.New(netsim.Config{Resources: nres, Weighting: netsim.RTTWeighted, CrossTraffic: tcp.CrossTraffic, WindowBytes: tcp.WindowBytes})
	if err != nil {
		return nil, 0, err
	}
	next := make([]int, len(lanes))
	start := func(l int) error {
		f := lanes[l][next[l]]
		next[l]++
		r := p.Route(f.src, f.dst)
		_, err := n.Start(netsim.FlowSpec{Bytes: f.bytes, LatencyS: r.LatencyS, Forward: r.Forward, Reverse: r.Reverse, Data: f})
		return err
	}
	for l := range lanes {
		if err := start(l); err != nil {
			return nil, 0, err
		}
	}
	done := map[int]float64{}
	for n.Pending() > 0 {
		for _, e := range n.Step() {
			if e.Kind != netsim.Done {
				continue
			}
			f := e.Flow.Data().(laneFlow)
			done[f.id] = e.Time
			if next[f.lane] < len(lanes[f.lane]) {
				if err := start(f.lane); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	return done, n.Stats().Events, nil
}

func runSimGridLanes(p *platform.Platform, lanes [][]laneFlow, bin, dir string) (map[int]float64, time.Duration, error) {
	var prs []pair
	var pat bytes.Buffer
	nflows := 0
	for _, lane := range lanes {
		for _, f := range lane {
			prs = append(prs, pair{f.src, f.dst}, pair{f.dst, f.src})
			fmt.Fprintf(&pat, "%d %d r%d r%d %d\n", f.id, f.lane, f.src, f.dst, f.bytes)
			nflows++
		}
	}
	xml, err := simgridXMLPairs(p, prs)
	if err != nil {
		return nil, 0, err
	}
	xmlPath, patPath := filepath.Join(dir, "platform.xml"), filepath.Join(dir, "pattern.txt")
	if err := os.WriteFile(xmlPath, []byte(xml), 0o644); err != nil {
		return nil, 0, err
	}
	if err := os.WriteFile(patPath, pat.Bytes(), 0o644); err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(bin, append([]string{xmlPath, patPath}, simgridCfg(p)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w: %s", bin, err, stderr.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	done := map[int]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var id int
		var t float64
		if _, err := fmt.Sscan(sc.Text(), &id, &t); err != nil {
			return nil, 0, fmt.Errorf("lanes output %q: %w", sc.Text(), err)
		}
		done[id] = t
	}
	if len(done) != nflows {
		return nil, 0, fmt.Errorf("lanes printed %d completions for %d flows: %s", len(done), nflows, stderr.String())
	}
	return done, cpu, nil
}

// cpuTime is this process's user plus system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// compareDense runs the dense pattern `rounds` times in each simulator,
// alternating, and prints the per-flow agreement and the CPU times.
func compareDense(p *platform.Platform, name, bin string, ranks, lanes, seq, rounds int, seed uint64, keep string) error {
	pat, err := densePattern(p, rand.New(rand.NewPCG(seed, 16)), ranks, lanes, seq)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sgdense")
	if err != nil {
		return err
	}
	if keep != "" {
		dir = keep
	} else {
		defer os.RemoveAll(dir)
	}
	fmt.Printf("\n### dense pattern on %s: %d ranks x %d lanes = %d flows in flight, %d flows in all\n\n", name, ranks, lanes, ranks*lanes, ranks*lanes*seq)
	fmt.Println("| round | netsim CPU (s) | netsim events | events per CPU s | SimGrid CPU (s, whole process) | netsim / SimGrid CPU | max rel. diff | makespan (s) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for r := range rounds {
		c0 := cpuTime()
		ours, events, err := runNetsimLanes(p, pat)
		ourCPU := cpuTime() - c0
		if err != nil {
			return err
		}
		theirs, sgCPU, err := runSimGridLanes(p, pat, bin, dir)
		if err != nil {
			return err
		}
		maxRel, makespan := 0.0, 0.0
		for id, b := range theirs {
			a := ours[id]
			maxRel = math.Max(maxRel, math.Abs(a-b)/b)
			makespan = math.Max(makespan, b)
		}
		fmt.Printf("| %d | %.3f | %d | %.0f | %.3f | %.3f | %.2e | %s |\n", r, ourCPU.Seconds(), events,
			float64(events)/ourCPU.Seconds(), sgCPU.Seconds(), ourCPU.Seconds()/sgCPU.Seconds(), maxRel,
			strconv.FormatFloat(makespan, 'g', 8, 64))
	}
	return nil
}
