package platform

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, name, src string) *Platform {
	t.Helper()
	p, err := Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func loadExample(t *testing.T) *Platform {
	t.Helper()
	data, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("example.yaml", data)
	if err != nil {
		t.Fatalf("docs/platform-format.md example: %v", err)
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestExpandNames(t *testing.T) {
	cases := map[string][]string{
		"a[00-03]":   {"a00", "a01", "a02", "a03"},
		"n[1-3]":     {"n1", "n2", "n3"},
		"n[8-11]":    {"n8", "n9", "n10", "n11"},
		"x[098-100]": {"x098", "x099", "x100"},
		"c[1-2]-ib":  {"c1-ib", "c2-ib"},
		"core":       {"core"},
	}
	for in, want := range cases {
		got, err := ExpandNames(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ExpandNames(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"a[3-1]", "a[1-]", "a[x-2]", "a[1-2", "a[1-2][3-4]", "", "a b", "n[0-99999999]"} {
		if _, err := ExpandNames(bad); err == nil {
			t.Errorf("ExpandNames(%q) accepted", bad)
		}
	}
}

func TestExampleParses(t *testing.T) {
	p := loadExample(t)
	if p.Name != "two-racks" || p.NumRanks() != 30 || len(p.Hosts()) != 30 {
		t.Fatalf("name %q ranks %d hosts %d", p.Name, p.NumRanks(), len(p.Hosts()))
	}
	// 2 full-duplex switch links (2 each) + 30 hosts x (up, down, 2 sockets, inter-socket).
	if got := len(p.Resources()); got != 4+30*5 {
		t.Errorf("resources = %d, want %d", got, 4+30*5)
	}
	if p.TCP() != (TCPSpec{CrossTraffic: 0.05, WindowBytes: 4194304}) {
		t.Errorf("tcp = %+v", p.TCP())
	}
	if p.Noise() != (NoiseSpec{Seed: 1, LatencyJitter: 0.02, BandwidthJitter: 0.01}) {
		t.Errorf("noise = %+v", p.Noise())
	}
	o := p.Overhead(3)
	if !near(o.SendS, 1e-6) || !near(o.RecvS, 1e-6) || o.SendPerByteS != 0 {
		t.Errorf("overhead = %+v", o)
	}
	if q := p.WithoutNoise(); q.Noise().LatencyJitter != 0 || q.Noise().BandwidthJitter != 0 || p.Noise().LatencyJitter != 0.02 {
		t.Errorf("WithoutNoise: %+v (original %+v)", q.Noise(), p.Noise())
	}
}

func resNames(p *Platform, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, p.Resources()[i].Name)
	}
	return out
}

func TestExampleRoutes(t *testing.T) {
	p := loadExample(t)
	// a00 (rank 0) to b00 (rank 15): 10us + 2us + 2us + 10us.
	r := p.Route(0, 15)
	if !near(r.LatencyS, 24e-6) || r.Hops != 4 {
		t.Errorf("a00->b00 latency %v hops %d", r.LatencyS, r.Hops)
	}
	if got, want := resNames(p, r.Forward), []string{"a00->torA", "torA->core", "core->torB", "torB->b00"}; !slices.Equal(got, want) {
		t.Errorf("forward %v, want %v", got, want)
	}
	if got, want := resNames(p, r.Reverse), []string{"b00->torB", "torB->core", "core->torA", "torA->a00"}; !slices.Equal(got, want) {
		t.Errorf("reverse %v, want %v", got, want)
	}
	for _, i := range r.Forward {
		if bw := p.Resources()[i].BandwidthBps; i == r.Forward[0] && bw != 125e6 {
			t.Errorf("NIC bandwidth %v, want 125e6 B/s", bw)
		}
	}
	if bw := p.Resources()[r.Forward[1]].BandwidthBps; bw != 1.25e9 {
		t.Errorf("backbone bandwidth %v", bw)
	}
	// Same switch: host link out, host link in.
	r = p.Route(0, 1)
	if !near(r.LatencyS, 20e-6) || r.Hops != 2 || !slices.Equal(resNames(p, r.Forward), []string{"a00->torA", "torA->a01"}) {
		t.Errorf("a00->a01: %+v %v", r, resNames(p, r.Forward))
	}
}

func TestRankPlacement(t *testing.T) {
	p := loadExample(t)
	q := p.WithRanks(PerHostCores, OrderBlock)
	if q.NumRanks() != 360 {
		t.Fatalf("cores block: %d ranks", q.NumRanks())
	}
	check := func(p *Platform, rank int, host string, socket, core int) {
		t.Helper()
		h, s, c := p.RankIdentity(rank)
		if h != host || s != socket || c != core {
			t.Errorf("rank %d = (%s, %d, %d), want (%s, %d, %d)", rank, h, s, c, host, socket, core)
		}
	}
	check(q, 0, "a00", 0, 0)
	check(q, 5, "a00", 0, 5)
	check(q, 6, "a00", 1, 6)
	check(q, 11, "a00", 1, 11)
	check(q, 12, "a01", 0, 0)
	check(q, 359, "b14", 1, 11)
	// Same socket: intra_socket; across sockets: inter_socket.
	r := q.Route(0, 5)
	if !near(r.LatencyS, 0.3e-6) || q.Resources()[r.Forward[0]].BandwidthBps != 40e9 || q.Resources()[r.Forward[0]].Name != "a00/socket0" {
		t.Errorf("intra-socket route %+v", r)
	}
	r = q.Route(0, 6)
	if !near(r.LatencyS, 0.6e-6) || q.Resources()[r.Forward[0]].Name != "a00/inter-socket" {
		t.Errorf("inter-socket route %+v", r)
	}
	c := p.WithRanks(PerHostCores, OrderCyclic)
	check(c, 0, "a00", 0, 0)
	check(c, 1, "a01", 0, 0)
	check(c, 29, "b14", 0, 0)
	check(c, 30, "a00", 0, 1)
	check(c, 30*6, "a00", 1, 6)
	for r := range c.NumRanks() {
		if h, _, _ := c.RankIdentity(r); h != c.Hosts()[r%30].Name {
			t.Fatalf("cyclic rank %d on %s, want host %d", r, h, r%30)
		}
	}
	b2 := p.WithRanks(2, OrderBlock)
	check(b2, 1, "a00", 0, 1)
	check(b2, 2, "a01", 0, 0)
	if _, err := p.Place(13, OrderBlock); err == nil {
		t.Error("13 ranks on a 12-core host accepted")
	}
	if _, err := p.Place(1, "random"); err == nil {
		t.Error("order random accepted")
	}
}

const tieHeader = `version: 1
host_types: {}
`

func TestRoutingTieBreaks(t *testing.T) {
	// s-a-t and s-b-t both 4us and 2 hops: the name rule picks a.
	// s-t direct is 5us: slower. s-c-d-t is 4us with 3 hops: more hops.
	src := tieHeader + `switches: [s, t, b, a, c, d]
links:
  - {between: [s, b], bandwidth: 1Gbps, latency: 2us}
  - {between: [b, t], bandwidth: 1Gbps, latency: 2us}
  - {between: [s, a], bandwidth: 1Gbps, latency: 2us}
  - {between: [a, t], bandwidth: 1Gbps, latency: 2us}
  - {between: [s, t], bandwidth: 1Gbps, latency: 5us}
  - {between: [s, c], bandwidth: 1Gbps, latency: 1us}
  - {between: [c, d], bandwidth: 1Gbps, latency: 1us}
  - {between: [d, t], bandwidth: 1Gbps, latency: 2us}
hosts:
  - {names: hs, switch: s, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: ht, switch: t, link: {bandwidth: 1Gbps, latency: 1us}}
`
	p := mustParse(t, "tie.yaml", src)
	r := p.Route(0, 1)
	if got, want := resNames(p, r.Forward), []string{"hs->s", "s->a", "a->t", "t->ht"}; !slices.Equal(got, want) {
		t.Errorf("forward %v, want %v", got, want)
	}
	if !near(r.LatencyS, 6e-6) || r.Hops != 4 {
		t.Errorf("latency %v hops %d", r.LatencyS, r.Hops)
	}
	// Routes are symmetric: t to s is the same path reversed.
	back := p.Route(1, 0)
	if got, want := resNames(p, back.Forward), []string{"ht->t", "t->a", "a->s", "s->hs"}; !slices.Equal(got, want) {
		t.Errorf("back forward %v, want %v", got, want)
	}
	if !slices.Equal(back.Forward, r.Reverse) {
		t.Errorf("reverse of s->t %v differs from route t->s %v", resNames(p, r.Reverse), resNames(p, back.Forward))
	}
}

func TestRoutingFewerHopsOnEqualLatency(t *testing.T) {
	// 0.1us + 0.2us equals 0.3us exactly in picoseconds though not in
	// floating point; the direct link wins on hops.
	src := tieHeader + `switches: [s, m, t]
links:
  - {between: [s, m], bandwidth: 1Gbps, latency: 0.1us}
  - {between: [m, t], bandwidth: 1Gbps, latency: 0.2us}
  - {between: [s, t], bandwidth: 1Gbps, latency: 0.3us}
hosts:
  - {names: hs, switch: s, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: ht, switch: t, link: {bandwidth: 1Gbps, latency: 1us}}
`
	p := mustParse(t, "hops.yaml", src)
	if got := resNames(p, p.Route(0, 1).Forward); !slices.Equal(got, []string{"hs->s", "s->t", "t->ht"}) {
		t.Errorf("forward %v", got)
	}
	// A faster three-hop path beats a slower direct link.
	p = mustParse(t, "lat.yaml", strings.Replace(src, "latency: 0.3us", "latency: 0.31us", 1))
	if got := resNames(p, p.Route(0, 1).Forward); !slices.Equal(got, []string{"hs->s", "s->m", "m->t", "t->ht"}) {
		t.Errorf("forward %v", got)
	}
}

func TestHalfDuplexSharesOneResource(t *testing.T) {
	src := tieHeader + `switches: [s, t]
links:
  - {between: [s, t], bandwidth: 100Mbps, latency: 1us, duplex: half}
hosts:
  - {names: hs, switch: s, link: {bandwidth: 1Gbps, latency: 1us, duplex: half}}
  - {names: ht, switch: t, link: {bandwidth: 1Gbps, latency: 1us}}
`
	p := mustParse(t, "half.yaml", src)
	r := p.Route(0, 1)
	if got := resNames(p, r.Forward); !slices.Equal(got, []string{"hs<->s", "s<->t", "t->ht"}) {
		t.Errorf("forward %v", got)
	}
	if got := resNames(p, r.Reverse); !slices.Equal(got, []string{"ht->t", "s<->t", "hs<->s"}) {
		t.Errorf("reverse %v", got)
	}
	if r.Forward[1] != r.Reverse[1] {
		t.Error("half-duplex link has two resources")
	}
}

// Routes are cached lazily behind a mutex; concurrent callers must agree
// with a sequential run.
func TestRouteConcurrent(t *testing.T) {
	p, err := Load("dichev-n1")
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := Load("dichev-n1")
	done := make(chan bool)
	for g := range 4 {
		go func() {
			ok := true
			for i := range 2000 {
				a, b := (i*7+g*131)%512, (i*13+g*17+1)%512
				if a == b {
					continue
				}
				if r, w := p.Route(a, b), ref.Route(a, b); !slices.Equal(r.Forward, w.Forward) || r.LatencyS != w.LatencyS {
					ok = false
				}
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("concurrent routes differ")
		}
	}
}

// A noise profile is read from the file and survives WithNoise, and
// WithoutNoise removes it with the jitters.
func TestNoiseProfile(t *testing.T) {
	y := "version: 1\nname: p\nswitches: [s]\nhost_types:\n  h: {cores_per_socket: 1}\nhosts:\n  - {names: \"a[0-1]\", switch: s, type: h, link: {bandwidth: 1Gbps, latency: 5us}}\nnoise: {seed: 4, profile: realistic}\n"
	p, err := Parse("p.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Noise(); n.Profile != NoiseRealistic || n.Seed != 4 || n.Quiet() {
		t.Errorf("noise %+v, want profile realistic, seed 4", n)
	}
	if n := p.WithoutNoise().Noise(); !n.Quiet() || n.Seed != 4 {
		t.Errorf("WithoutNoise: %+v, want quiet with seed 4", n)
	}
	bad := strings.Replace(y, "profile: realistic}", "profile: realistic,\n  latency_jitter: 0.02}", 1)
	_, err = Parse("p.yaml", []byte(bad))
	if want := `p.yaml:9: noise.latency_jitter: not allowed with profile "realistic"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("profile with a jitter: error %v, want %q", err, want)
	}
}
