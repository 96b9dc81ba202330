// Command noisefit fits the simulator's realistic noise profile
// (netsim.Realistic) to round trips recorded on emulated clusters, and
// prints the fitted parameters beside the quantiles they reproduce.
//
//	go run ./tools/noisefit tools/noisefit/testdata/recordings.txt
//
// Each line of the list names a dataset recorded with
// `netaware probe rtt --keep-samples` and the platform file of the cluster
// it was recorded on (tools/noisefit/record.sh records them).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"netaware/netsim"
)

func main() {
	base := flag.Float64("base", 24e-6, "floor RTT of the emulated pairs (s); the delays are additive, so it only sets how long an exchange lasts")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: noisefit [-base S] LIST\n\nLIST has one recording a line: DATASET.json PLATFORM.yaml (paths relative to the list).\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	rec, err := LoadList(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "noisefit:", err)
		os.Exit(1)
	}
	start := netsim.RealisticProfile()
	fmt.Printf("recorded: %d exchanges, %d pairs\n", len(rec.Samples), len(rec.PairMins))
	report("profile now", rec, start, *base)
	fit, obj, err := Fit(rec, start, *base)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noisefit:", err)
		os.Exit(1)
	}
	report(fmt.Sprintf("fitted (objective %.4f)", obj), rec, fit, *base)
	fmt.Printf("\nnetsim.Realistic{AwakeProb: %.3g, AwakeMeanS: %.3g, WakeMedianS: %.3g, WakeSigma: %.3g, SpellWindowS: %.3g, SpellProb: %.3g, SpellMedianS: %.3g, SpellSigma: %.3g, BandwidthJitter: %.3g}\n",
		fit.AwakeProb, fit.AwakeMeanS, fit.WakeMedianS, fit.WakeSigma, fit.SpellWindowS, fit.SpellProb, fit.SpellMedianS, fit.SpellSigma, fit.BandwidthJitter)
}

// LoadList reads every recording a list names and pools them.
func LoadList(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []*Recording
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		w := strings.Fields(t)
		if len(w) != 2 {
			return nil, fmt.Errorf("%s:%d: want DATASET PLATFORM", path, line)
		}
		dir := filepath.Dir(path)
		r, err := Load(filepath.Join(dir, w[0]), filepath.Join(dir, w[1]))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no recordings", path)
	}
	return Merge(recs), nil
}

func report(title string, rec *Recording, r netsim.Realistic, base float64) {
	sim := Emulate(r, rec.Params, max(200, len(rec.PairMins)), base, 2)
	fmt.Printf("\n%s\n", title)
	row := func(name string, qs []float64, x, y []float64) {
		a, b := Quantiles(x, qs...), Quantiles(y, qs...)
		for i, q := range qs {
			fmt.Printf("  %-22s q%-4g recorded %8.2fus  emulated %8.2fus\n", name, q*100, a[i]*1e6, b[i]*1e6)
		}
	}
	row("excess per exchange", sampleQs, rec.Samples, sim.Samples)
	row("excess of pair minimum", minQs, rec.PairMins, sim.PairMins)
}
