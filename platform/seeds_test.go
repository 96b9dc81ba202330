package platform

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func mustLoad(t *testing.T, name string) *Platform {
	t.Helper()
	p, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hostIndex(t *testing.T, p *Platform, name string) int {
	t.Helper()
	for i, h := range p.Hosts() {
		if h.Name == name {
			return i
		}
	}
	t.Fatalf("no host %s", name)
	return -1
}

func rtt(t *testing.T, p *Platform, a, b string) float64 {
	t.Helper()
	ha, hb := hostIndex(t, p, a), hostIndex(t, p, b)
	return p.HostRoute(ha, hb).LatencyS + p.HostRoute(hb, ha).LatencyS
}

func minBandwidth(p *Platform, r Route) float64 {
	m := math.Inf(1)
	for _, i := range r.Forward {
		m = math.Min(m, p.Resources()[i].BandwidthBps)
	}
	return m
}

func approx(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// Seed 001 Sect. 3.2.1: 15 nodes per rack, dual-socket six-core, 1 Gbps NICs,
// 10 Gbps backbone, 450 us RTT between racks.
func TestZhuMainTestbed(t *testing.T) {
	p := mustLoad(t, "zhu-2racks")
	if len(p.Hosts()) != 30 || p.Hosts()[0].Type.Sockets != 2 || p.Hosts()[0].Type.CoresPerSocket != 6 {
		t.Errorf("hosts %d type %+v", len(p.Hosts()), p.Hosts()[0].Type)
	}
	if got := rtt(t, p, "a00", "b07"); !approx(got, 450e-6, 1e-9) {
		t.Errorf("cross-rack RTT %v, want 450us", got)
	}
	r := p.HostRoute(hostIndex(t, p, "a00"), hostIndex(t, p, "b00"))
	if minBandwidth(p, r) != 125e6 || p.Resources()[r.Forward[1]].BandwidthBps != 1.25e9 {
		t.Errorf("NIC/backbone bandwidths wrong on %v", resNames(p, r.Forward))
	}
	if q := p.WithRanks(PerHostCores, OrderBlock); q.NumRanks() != 360 {
		t.Errorf("per-core ranks %d", q.NumRanks())
	}
}

// Seed 001 Sect. 3.2.2: 144 four-core nodes on four switches, 1 Gb/s nodes,
// 10 Gb/s uplinks to the Nancy router.
func TestZhuGrapheneValidationTestbed(t *testing.T) {
	p := mustLoad(t, "graphene")
	if len(p.Hosts()) != 144 || p.Hosts()[0].Type.Cores() != 4 {
		t.Fatalf("%d hosts", len(p.Hosts()))
	}
	r := p.HostRoute(hostIndex(t, p, "graphene-1"), hostIndex(t, p, "graphene-144"))
	if got := resNames(p, r.Forward); !slices.Equal(got, []string{"graphene-1->sgraphene1", "sgraphene1->gw-nancy", "gw-nancy->sgraphene4", "sgraphene4->graphene-144"}) {
		t.Errorf("route %v", got)
	}
	if p.Resources()[r.Forward[1]].BandwidthBps != 1.25e9 || minBandwidth(p, r) != 125e6 {
		t.Error("uplink or node bandwidth wrong")
	}
}

// Seed 000 Sect. 5.4: a single 1 Gbit Dell-Cisco link is the bottleneck;
// Bordereau and Borderline form one bandwidth cluster, Bordeplage another.
func TestDichevBordeauxBottleneck(t *testing.T) {
	p := mustLoad(t, "bordeaux-2013")
	cross := p.HostRoute(hostIndex(t, p, "bordeplage-1"), hostIndex(t, p, "bordereau-1"))
	names := resNames(p, cross.Forward)
	if !slices.Contains(names, "dell->cisco") {
		t.Errorf("Bordeplage->Bordereau route %v avoids the Dell-Cisco link", names)
	}
	// Point to point, every pair gets 1 Gbps (the NIC limit).
	if minBandwidth(p, cross) != 125e6 {
		t.Errorf("isolated bandwidth %v", minBandwidth(p, cross))
	}
	inside := p.HostRoute(hostIndex(t, p, "bordereau-1"), hostIndex(t, p, "borderline-1"))
	if slices.Contains(resNames(p, inside.Forward), "dell->cisco") {
		t.Error("Bordereau-Borderline crosses the bottleneck")
	}
	if cross.LatencyS <= inside.LatencyS {
		t.Error("the Dell-Cisco path should have the higher latency")
	}
	var bc *Level
	for _, l := range p.Truth() {
		if l.Name == "bandwidth-cluster" {
			bc = &l
		}
	}
	if bc == nil || len(bc.Groups) != 2 || len(bc.Groups[0]) != 32 || len(bc.Groups[1]) != 32 {
		t.Errorf("bandwidth-cluster level %+v", bc)
	}
}

// Seed 000 Sect. 5.8.3: four sites, 16 nodes each, Lyon central.
func TestDichevFourSitesLyonCentral(t *testing.T) {
	p := mustLoad(t, "grid5000-4sites")
	sites := []string{"bordeaux-01", "grenoble-01", "toulouse-01", "lyon-01"}
	for i, a := range sites {
		for _, b := range sites[i+1:] {
			r := p.HostRoute(hostIndex(t, p, a), hostIndex(t, p, b))
			viaLyon := false
			for _, n := range resNames(p, r.Forward) {
				viaLyon = viaLyon || strings.HasPrefix(n, "renater-lyon->")
			}
			// "A few ms" between sites, except to Lyon's own site.
			far := a != "lyon-01" && b != "lyon-01"
			if !viaLyon || (far && (r.LatencyS < 1e-3 || r.LatencyS > 10e-3)) {
				t.Errorf("%s-%s: %v latency %v", a, b, resNames(p, r.Forward), r.LatencyS)
			}
		}
	}
	ls := p.Truth()
	if ls[1].Name != "switch" || len(ls[1].Groups) != 4 || len(ls[1].Groups[0]) != 16 {
		t.Errorf("site level %v", levelSummary(ls))
	}
}

// Seed 002 Sect. 4/5: adding two hops adds about 10 us of RTT; cluster 2 is
// a hub with four switches, cluster 3 a chain; inter-cluster latencies
// differ by pair; the left and right switches are 5 us apart.
func TestShiraiTwoHopsAddTenMicroseconds(t *testing.T) {
	p := mustLoad(t, "shirai-4clusters")
	two := rtt(t, p, "c3-01", "c3-02")  // same switch: 2 hops
	four := rtt(t, p, "c3-01", "c3-17") // neighbouring chain switches: 3 hops
	six := rtt(t, p, "c2-01", "c2-17")  // through the hub: 4 hops
	if !approx(six-two, 10e-6, 1e-6) {
		t.Errorf("RTT 4 hops %v vs 2 hops %v: difference %v, want 10us", six, two, six-two)
	}
	if !approx(four-two, 5e-6, 1e-6) {
		t.Errorf("one extra link adds %v RTT, want 5us", four-two)
	}
	if got := rtt(t, p, "c3-01", "c3-49") - rtt(t, p, "c3-01", "c3-17"); !approx(got, 10e-6, 1e-6) {
		t.Errorf("chain: two more hops add %v", got)
	}
	firsts := []string{"c1-01", "c2-01", "c3-01", "c4-01"}
	seen := map[int64]bool{}
	for i, a := range firsts {
		for _, b := range firsts[i+1:] {
			l := picoseconds(rtt(t, p, a, b))
			if seen[l] {
				t.Errorf("two cluster pairs share RTT %v ps", l)
			}
			seen[l] = true
		}
	}
	ls := p.Truth()
	var names []string
	for _, l := range ls {
		names = append(names, l.Name)
	}
	if !slices.Contains(names, "cluster") || !slices.Contains(names, "side") {
		t.Errorf("levels %v", names)
	}
}

// Seed 003 Sect. 5.3-5.4: intra-socket about 2x faster than inter-socket;
// 16 nodes in two groups, {0-9} and {10-15}, at 0.45 us inside a group and
// 0.65 us across; 32 cores per node, so 512 ranks.
func TestReinfjellFramLatencies(t *testing.T) {
	p := mustLoad(t, "fram-like")
	if p.NumRanks() != 512 || len(p.Hosts()) != 16 {
		t.Fatalf("%d ranks on %d hosts", p.NumRanks(), len(p.Hosts()))
	}
	intra, inter := p.Route(0, 1), p.Route(0, 16)
	if !approx(inter.LatencyS/intra.LatencyS, 2, 1e-9) {
		t.Errorf("inter/intra socket latency %v/%v", inter.LatencyS, intra.LatencyS)
	}
	in := p.Route(0, 9*32)   // node 0 to node 9: same group
	out := p.Route(0, 10*32) // node 0 to node 10: across groups
	if !approx(in.LatencyS, 0.45e-6, 1e-9) || !approx(out.LatencyS, 0.65e-6, 1e-9) {
		t.Errorf("node latencies %v, %v", in.LatencyS, out.LatencyS)
	}
	ls := p.Truth()
	if got := levelSummary(ls); got != "socket:32map[16:32] host:16map[32:16] switch:2map[192:1 320:1] all:1map[512:1] " {
		t.Errorf("levels %s", got)
	}
}

// Seed 000 Sect. 5.11.1: 15 routers, hosts on the 8 leaves (512 hosts),
// 1 Gbps except 4 bottleneck links of 100 Mbps, 100 us router latency; the
// hierarchy of Fig. 5.19 is pairs, halves, all.
func TestDichevN1FourBottlenecks(t *testing.T) {
	p := mustLoad(t, "dichev-n1")
	if len(p.Switches()) != 15 || len(p.Hosts()) != 512 {
		t.Fatalf("%d switches %d hosts", len(p.Switches()), len(p.Hosts()))
	}
	slow := 0
	for _, l := range p.Links() {
		if l.BandwidthBps == 12.5e6 {
			slow++
		} else if l.BandwidthBps != 125e6 {
			t.Errorf("link %s-%s at %v", l.A, l.B, l.BandwidthBps)
		}
		if l.LatencyS != 100e-6 {
			t.Errorf("link %s-%s latency %v", l.A, l.B, l.LatencyS)
		}
	}
	if slow != 4 {
		t.Errorf("%d bottleneck links, want 4", slow)
	}
	want := "host:512map[1:512] switch:8map[64:8] tree-1:4map[128:4] tree-2:2map[256:2] all:1map[512:1] "
	if got := levelSummary(p.Truth()); got != want {
		t.Errorf("levels %s, want %s", got, want)
	}
	// R1 and R2 hosts meet below the bottlenecks; R1 and R3 hosts cross two.
	if minBandwidth(p, p.Route(0, 64)) != 125e6 || minBandwidth(p, p.Route(0, 128)) != 12.5e6 {
		t.Error("bottlenecks not where Fig. 5.19 puts them")
	}
}

// Seed 000 Sect. 5.11.3: 9 routers with 64 hosts each (576), link
// capacities between 1 and 10 Gbps falling from the top, 20 ms on R1-R2 and
// R2-R3, 100 us elsewhere.
func TestDichevN2GradualCapacities(t *testing.T) {
	p := mustLoad(t, "dichev-n2")
	if len(p.Switches()) != 9 || len(p.Hosts()) != 576 {
		t.Fatalf("%d switches %d hosts", len(p.Switches()), len(p.Hosts()))
	}
	for _, l := range p.Links() {
		slowLink := (l.A == "R1" && l.B == "R2") || (l.A == "R2" && l.B == "R3")
		if slowLink != (l.LatencyS == 20e-3) || (!slowLink && l.LatencyS != 100e-6) {
			t.Errorf("link %s-%s latency %v", l.A, l.B, l.LatencyS)
		}
		if l.BandwidthBps < 125e6 || l.BandwidthBps > 1.25e9 {
			t.Errorf("link %s-%s bandwidth %v outside 1-10 Gbps", l.A, l.B, l.BandwidthBps)
		}
	}
	// Capacity never rises going down from R1.
	root, _ := p.SwitchIndex("R1")
	for s := range p.Switches() {
		links, _ := p.SwitchPath(root, s)
		for i := 1; i < len(links); i++ {
			if p.Links()[links[i]].BandwidthBps > p.Links()[links[i-1]].BandwidthBps {
				t.Errorf("capacity rises on the way from R1 to %s", p.Switches()[s])
			}
		}
	}
	ls := p.Truth()
	if got := levelSummary(ls); got != "host:576map[1:576] switch:9map[64:9] bandwidth-cluster:7map[64:5 128:2] bandwidth-cluster-2:2map[256:1 320:1] all:1map[576:1] " {
		t.Errorf("levels %s", got)
	}
}
