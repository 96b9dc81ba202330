package score

import (
	"math"
	"strings"
	"testing"

	"netaware/topo"
)

// zhu-2racks.json is what 'netaware discover --platform zhu-2racks' found
// (levels host, switch, all and the latency tree).

func TestTopologyAgainstItselfIsPerfect(t *testing.T) {
	found, err := topo.ReadFile("testdata/zhu-2racks.json")
	if err != nil {
		t.Fatal(err)
	}
	truth, err := LoadTruth("testdata/zhu-2racks.json")
	if err != nil {
		t.Fatal(err)
	}
	if truth.Kind != "topology" || truth.EndpointsOf != "hosts" || len(truth.Endpoints) != 30 || truth.Platform != nil {
		t.Fatalf("truth %s: kind %s, %d %s", truth.Name, truth.Kind, len(truth.Endpoints), truth.EndpointsOf)
	}
	rep, err := Compare(found, "found", truth, Options{Queries: 500, Seed: 3, MaxPairs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range rep.Levels {
		if l.Truth != l.Found || math.Abs(l.NMI-1) > 1e-12 || l.ARI != 1 || l.Accuracy != 1 {
			t.Errorf("level %s: %+v, want a perfect match", l.Truth, l)
		}
	}
	for _, q := range []struct {
		name string
		fp   float64
		fn   float64
	}{{"any", rep.LinkQueries.FalsePositiveRate, rep.LinkQueries.FalseNegativeRate}, {"directed", rep.DirQueries.FalsePositiveRate, rep.DirQueries.FalseNegativeRate}} {
		if q.fp != 0 || q.fn != 0 {
			t.Errorf("%s queries: false positives %g, false negatives %g", q.name, q.fp, q.fn)
		}
	}
	// 30 hosts: 435 pairs, every ratio exactly 1.
	if l := rep.Latency; l.Pairs != 435 || l.Min != 1 || l.Max != 1 || l.Within5 != 1 {
		t.Errorf("latency ratios %+v", l)
	}
}

func TestAgainstPlatform(t *testing.T) {
	found, err := topo.ReadFile("testdata/zhu-2racks.json")
	if err != nil {
		t.Fatal(err)
	}
	truth, err := LoadTruth("zhu-2racks")
	if err != nil {
		t.Fatal(err)
	}
	if truth.Kind != "platform" || truth.Platform == nil || truth.Shares == nil {
		t.Fatalf("platform truth %+v", truth)
	}
	rep, err := Compare(found, "found", truth, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Discovery found the platform's host and switch levels exactly.
	byTruth := map[string]float64{} // NMI, 1 up to rounding
	for _, l := range rep.Levels {
		byTruth[l.Truth] = l.NMI
	}
	if math.Abs(byTruth["host"]-1) > 1e-12 || math.Abs(byTruth["switch"]-1) > 1e-12 {
		t.Errorf("levels %+v", rep.Levels)
	}
	if rep.LinkQueries.Queries != 10000 || math.IsNaN(rep.Latency.Median) {
		t.Errorf("queries %+v, latency %+v", rep.LinkQueries, rep.Latency)
	}
}

func TestErrorsNameTheirInput(t *testing.T) {
	if _, err := LoadTruth("no-such-file.json"); err == nil || !strings.Contains(err.Error(), "no-such-file.json") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadTruth("no-such-platform"); err == nil || !strings.Contains(err.Error(), "no-such-platform") {
		t.Errorf("unknown platform: %v", err)
	}
	found, _ := topo.ReadFile("testdata/zhu-2racks.json")
	truth, _ := LoadTruth("testdata/zhu-2racks.json")
	truth.Size = 31
	if _, err := Compare(found, "found.json", truth, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "found.json has 30 ranks") {
		t.Errorf("size mismatch: %v", err)
	}
	if _, err := Compare(found, "found.json", truth, Options{Queries: -1, MaxPairs: 1}); err == nil {
		t.Error("negative queries accepted")
	}
}
