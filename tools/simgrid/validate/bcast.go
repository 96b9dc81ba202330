package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/internal/atomicfile"
	"netaware/netsim"
	"netaware/platform"
)

// compareBcast times a binomial broadcast of size bytes in comm/sim and in
// SimGrid (the bcast program of tools/simgrid/bcast.cpp), side by side.
func compareBcast(p *platform.Platform, name, bin string, size, reps int) error {
	n := p.NumRanks()
	var prs []pair
	for me := 1; me < n; me++ {
		mask := 1
		for me&mask == 0 {
			mask <<= 1
		}
		prs = append(prs, pair{me - mask, me}, pair{me, me - mask})
	}
	buf := make([]byte, size) // shared by all ranks: no copies
	// Each simulator runs reps times; the fastest run counts (the machine
	// is shared, slower runs measure the neighbours).
	var res sim.Result
	ourWall := time.Duration(math.MaxInt64)
	ourCPU := math.Inf(1)
	for i := 0; i < reps; i++ {
		t0, c0 := time.Now(), cpuSeconds()
		var err error
		res, err = sim.Run(context.Background(), p, sim.Options{Weighting: netsim.RTTWeighted}, func(ctx context.Context, c comm.Comm) error {
			return sim.BinomialBcast(ctx, c, buf)
		})
		ourWall = min(ourWall, time.Since(t0))
		ourCPU = math.Min(ourCPU, cpuSeconds()-c0)
		if err != nil {
			return err
		}
	}
	dir, err := os.MkdirTemp("", "sgbcast")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	xml, err := simgridXMLPairs(p, prs)
	if err != nil {
		return err
	}
	xmlPath := filepath.Join(dir, "platform.xml")
	if err := atomicfile.WriteFile(xmlPath, []byte(xml)); err != nil {
		return err
	}
	tcp := p.TCP()
	sgWall := time.Duration(math.MaxInt64)
	sgRun, sgCPU, sgVirtual := math.Inf(1), math.Inf(1), 0.0
	for i := 0; i < reps; i++ {
		t1 := time.Now()
		out, err := exec.Command(bin, xmlPath, strconv.Itoa(n), strconv.Itoa(size),
			"--cfg=network/model:CM02",
			"--cfg=network/crosstraffic:"+boolStr(tcp.CrossTraffic > 0),
			fmt.Sprintf("--cfg=network/TCP-gamma:%d", tcp.WindowBytes),
			"--log=root.thres:critical").Output()
		sgWall = min(sgWall, time.Since(t1))
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		fields := strings.Fields(string(out))
		if len(fields) != 3 {
			return fmt.Errorf("%s output %q: want virtual, wall and CPU seconds", bin, out)
		}
		v, err1 := strconv.ParseFloat(fields[0], 64)
		w, err2 := strconv.ParseFloat(fields[1], 64)
		c, err3 := strconv.ParseFloat(fields[2], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("%s output %q: not three numbers", bin, out)
		}
		sgVirtual, sgRun, sgCPU = v, math.Min(sgRun, w), math.Min(sgCPU, c)
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	fmt.Printf("\n### binomial broadcast of %d bytes on %s (%d ranks), best of %d runs\n\n", size, name, n, reps)
	fmt.Println("| simulator | wall, whole run | wall, simulation only | CPU, simulation only | virtual time (s) |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| netaware comm/sim (rendezvous, overheads) | %v | %v | %v | %.6f |\n", r(ourWall), r(ourWall), r(secs(ourCPU)), res.VirtualTime.Seconds())
	fmt.Printf("| SimGrid CM02, S4U mailboxes | %v | %v | %v | %.6f |\n", r(sgWall), r(secs(sgRun)), r(secs(sgCPU)), sgVirtual)
	fmt.Printf("\nSimGrid / netaware, simulation only: wall %.1fx, CPU %.1fx\n", sgRun/ourWall.Seconds(), sgCPU/ourCPU)
	return nil
}

func secs(s float64) time.Duration { return time.Duration(s * 1e9) }

// cpuSeconds is the user and system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
