package platform

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// scaleSpecs are the generated platforms kept under testdata/scale, the
// worlds of the scaling figures in docs/scaling.md.
func scaleSpecs() map[string]ClusterSpec {
	// One family: 4 leaf switches under 2 spines, hosts of 2 x 16 cores,
	// the leaves growing with the ranks (cmd/netaware's scaleSpec).
	three := func(hosts int) ClusterSpec {
		return ClusterSpec{Name: fmt.Sprintf("three-level-%d", 32*hosts), Hosts: hosts, HostsPerLeaf: hosts / 4, LeavesPerSpine: 2, Sockets: 2, CoresPerSocket: 16,
			NICBandwidth: "1Gbps", NICLatency: "5us", Jitter: 0.02, Seed: 1}
	}
	return map[string]ClusterSpec{
		"two-level-256.yaml":     TwoLevelCluster(16),
		"two-level-1024.yaml":    TwoLevelCluster(64),
		"two-level-4096.yaml":    TwoLevelCluster(256),
		"three-level-1024.yaml":  three(32),
		"three-level-4096.yaml":  three(128),
		"three-level-16384.yaml": three(512),
	}
}

// TestScaleTestdataIsGenerated: the files under testdata/scale are what
// the generator writes (NETAWARE_UPDATE_TESTDATA=1 rewrites them), and
// each has the ranks, hosts and truth levels its spec says.
func TestScaleTestdataIsGenerated(t *testing.T) {
	for file, spec := range scaleSpecs() {
		want, err := spec.YAML()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "scale", file)
		if os.Getenv("NETAWARE_UPDATE_TESTDATA") != "" {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output (NETAWARE_UPDATE_TESTDATA=1 go test ./platform -run ScaleTestdata)", path)
		}
		p, err := Parse(path, got)
		if err != nil {
			t.Fatal(err)
		}
		if n := p.NumRanks(); n != spec.Hosts*spec.Sockets*spec.CoresPerSocket {
			t.Errorf("%s: %d ranks", file, n)
		}
		names := []string{}
		for _, l := range p.Truth() {
			names = append(names, l.Name)
		}
		wantLevels := 4 // socket, host, switch, all
		if spec.LeavesPerSpine > 0 {
			wantLevels = 5
		}
		if len(names) != wantLevels {
			t.Errorf("%s: truth levels %v, want %d", file, names, wantLevels)
		}
	}
}

// A small cluster worked by hand: 3 hosts of 1 x 2 cores, 2 per leaf, 1
// leaf per spine: 6 ranks; hosts n0, n1 on leaf0 under spine0, n2 on leaf1
// under spine1; the leaves' uplinks make 0-2 farther than 0-1 and 0-4
// farther still.
func TestClusterSpecByHand(t *testing.T) {
	spec := ClusterSpec{Name: "tiny", Hosts: 3, HostsPerLeaf: 2, LeavesPerSpine: 1, Sockets: 1, CoresPerSocket: 2, NICBandwidth: "1Gbps", NICLatency: "5us"}
	b, err := spec.YAML()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("tiny.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if p.NumRanks() != 6 || len(p.Hosts()) != 3 || len(p.Switches()) != 5 {
		t.Fatalf("%d ranks, %d hosts, %d switches", p.NumRanks(), len(p.Hosts()), len(p.Switches()))
	}
	l01, l02, l04 := p.Route(0, 1).LatencyS, p.Route(0, 2).LatencyS, p.Route(0, 4).LatencyS
	if !(l01 < l02 && l02 < l04) || l02 != 10e-6 || l04 != 10e-6+2*2e-6+2*10e-6 {
		t.Errorf("latencies 0-1 %g, 0-2 %g, 0-4 %g", l01, l02, l04)
	}
	for _, bad := range []ClusterSpec{{Hosts: 0, HostsPerLeaf: 1, Sockets: 1, CoresPerSocket: 1}, {Hosts: 2, HostsPerLeaf: 1, Sockets: 1, CoresPerSocket: 1, Jitter: 2}} {
		if _, err := bad.YAML(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
