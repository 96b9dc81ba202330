package dataset

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func plogpSize(m int, rttMin, rttMean, g, os, or float64) PLogPSize {
	return PLogPSize{Bytes: m, RTT: Summary{N: 8, Mean: rttMean, Min: rttMin, Max: rttMean}, GS: g,
		Os: Summary{N: 8, Mean: os}, Or: Summary{N: 8, Mean: or}}
}

func TestPLogPImplausible(t *testing.T) {
	good := PLogPResult{LS: 10e-6, G0S: 1e-6, LogGP: LogGP{GPerByteS: 1e-9}, Sizes: []PLogPSize{
		plogpSize(0, 22e-6, 23e-6, 1e-6, 0, 0), // zero overheads: the simulator without overhead
		plogpSize(1024, 24e-6, 30e-6, 2e-6, 1e-6, 1e-6),
		plogpSize(4096, 13e-6, 40e-6, 5e-6, 1e-6, 1e-6), // fastest 46% below 24 us: still noise
	}}
	if w := good.Implausible(); w != nil {
		t.Errorf("plausible result flagged: %v", w)
	}
	bad := PLogPResult{LS: -2.719e-6, G0S: 0, LogGP: LogGP{GPerByteS: -1e-10}, Sizes: []PLogPSize{
		plogpSize(0, 20e-6, 21e-6, 0, 0, -1e-7),
		plogpSize(1024, 9e-6, 30e-6, 2e-6, -3e-7, 0), // fastest 55% below 20 us
		plogpSize(4096, 30e-6, 0, -1e-6, 0, 0),
	}}
	want := []string{
		"L = -2.719e-06 s < 0",
		"g(0) = 0 s <= 0",
		"G = -1e-10 s/B < 0",
		"g(0) = 0 s <= 0",
		"o_r(0) = -1e-07 s < 0",
		"o_s(1024) = -3e-07 s < 0",
		"fastest RTT(1024) = 9e-06 s, but fastest RTT(0) = 2e-05 s",
		"RTT(4096) = 0 s <= 0",
		"g(4096) = -1e-06 s <= 0",
	}
	if got := bad.Implausible(); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOtherResultsImplausible(t *testing.T) {
	for _, tc := range []struct {
		r    implausibler
		want []string
	}{
		{&RTTResult{MinS: 1e-5, MaxS: 2e-5}, nil},
		{&RTTResult{MinS: 0, MaxS: -1e-6}, []string{"RTT min = 0 s <= 0", "RTT max = -1e-06 s < min = 0 s"}},
		{&HockneyResult{AlphaS: 1e-5, BetaSPerByte: 1e-9, Sizes: []HockneySize{{Bytes: 1, Time: Summary{Mean: 1e-5}}}}, nil},
		{&HockneyResult{AlphaS: -1e-6, BetaSPerByte: 0, Sizes: []HockneySize{{Bytes: 1, Time: Summary{Mean: 0}}}},
			[]string{"alpha = -1e-06 s < 0", "beta = 0 s/B <= 0", "time(1) = 0 s <= 0"}},
		{&BandwidthResult{BandwidthBps: 1e8, Bandwidth: Summary{Min: 9e7}}, nil},
		{&BandwidthResult{BandwidthBps: 1e8, Bandwidth: Summary{Min: 0}}, []string{"bandwidth = 1e+08 B/s (min 0) <= 0"}},
	} {
		if got := tc.r.Implausible(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.r, got, tc.want)
		}
	}
}

// TestCheckMarksPairsInTheFile: Check names section and pair, and the
// warnings travel with the dataset; a pair found plausible again loses them.
func TestCheckMarksPairsInTheFile(t *testing.T) {
	d := &Dataset{World: World{Kind: "local", Size: 3}, RTT: &RTTSection{Pairs: []PairResult[RTTResult]{
		{A: 0, B: 1, Result: RTTResult{MinS: 1e-5, MaxS: 1e-5}},
		{A: 2, B: 1, Result: RTTResult{MinS: -1e-6, MaxS: 1e-5}},
	}}}
	lines := d.Check()
	if want := []string{"rtt 2->1: RTT min = -1e-06 s <= 0"}; !reflect.DeepEqual(lines, want) {
		t.Fatalf("Check: %q, want %q", lines, want)
	}
	path := filepath.Join(t.TempDir(), "d.json")
	if err := d.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if w := back.RTT.Pairs[1].Warnings; len(w) != 1 || back.RTT.Pairs[0].Warnings != nil {
		t.Errorf("warnings after a round trip: %q, %q", back.RTT.Pairs[0].Warnings, w)
	}
	b, _ := json.Marshal(back.RTT.Pairs[0])
	if strings.Contains(string(b), "warnings") {
		t.Errorf("a plausible pair carries a warnings key: %s", b)
	}
	back.RTT.Pairs[1].Result.MinS = 2e-6
	if lines := back.Check(); lines != nil || back.RTT.Pairs[1].Warnings != nil {
		t.Errorf("after the fix: %q, %q", lines, back.RTT.Pairs[1].Warnings)
	}
}
