package platform

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

func BenchmarkParseExample(b *testing.B) {
	data, _ := os.ReadFile("testdata/example.yaml")
	for b.Loop() {
		p, err := Parse("example.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		p.Truth()
	}
}

// bigPlatform is 128 hosts x 32 cores = 4096 ranks on 16 leaf switches
// under 4 spines.
func bigPlatform(b *testing.B) *Platform {
	src := "version: 1\nswitches: [\"spine[1-4]\", \"leaf[01-16]\"]\nlinks:\n"
	for l := 1; l <= 16; l++ {
		for s := 1; s <= 4; s++ {
			src += fmt.Sprintf("  - {between: [leaf%02d, spine%d], bandwidth: 100Gbps, latency: 0.1us}\n", l, s)
		}
	}
	src += "host_types:\n  n32: {sockets: 2, cores_per_socket: 16, intra_socket: {bandwidth: 20GBps, latency: 0.2us}, inter_socket: {bandwidth: 10GBps, latency: 0.4us}}\nhosts:\n"
	for l := 1; l <= 16; l++ {
		src += fmt.Sprintf("  - {names: \"n%02d-[1-8]\", switch: leaf%02d, type: n32, link: {bandwidth: 100Gbps, latency: 0.2us}}\n", l, l)
	}
	src += "ranks: {per_host: cores}\n"
	p, err := Parse("big.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkRoute4096 measures Route between random rank pairs of a
// 4096-rank platform, caches warm.
func BenchmarkRoute4096(b *testing.B) {
	p := bigPlatform(b)
	rng := rand.New(rand.NewPCG(1, 2))
	n := p.NumRanks()
	for b.Loop() {
		s, d := rng.IntN(n), rng.IntN(n)
		if s != d {
			p.Route(s, d)
		}
	}
}

// BenchmarkLoad4096 measures parsing, placement and ground truth of the
// 4096-rank platform.
func BenchmarkLoad4096(b *testing.B) {
	for b.Loop() {
		bigPlatform(b).Truth()
	}
}

// BenchmarkRoute4096Cold is the baseline for BenchmarkRoute4096: the same
// random pairs with the switch-route cache emptied before every call, i.e.
// a Dijkstra per route.
func BenchmarkRoute4096Cold(b *testing.B) {
	p := bigPlatform(b)
	rng := rand.New(rand.NewPCG(1, 2))
	n := p.NumRanks()
	for b.Loop() {
		s, d := rng.IntN(n), rng.IntN(n)
		p.routes = &routeCache{trees: map[int]*spTree{}, paths: map[[2]int]*switchPath{}}
		if s != d {
			p.Route(s, d)
		}
	}
}

// BenchmarkWriteSimGrid times the SimGrid export of issue 18's two-level
// clusters (8 hosts per leaf switch, 16 ranks a host) and reports the file
// size: the zoned form grows with the hosts, the full form (2,048 hosts at
// most here) with their square. Run:
// go test -run X -bench WriteSimGrid -benchtime 1x ./platform
func BenchmarkWriteSimGrid(b *testing.B) {
	for _, c := range []struct {
		form  string
		hosts int
	}{{"zoned", 512}, {"zoned", 2048}, {"zoned", 8192}, {"full", 512}, {"full", 2048}} {
		y, err := TwoLevelCluster(c.hosts).YAML()
		if err != nil {
			b.Fatal(err)
		}
		p, err := Parse("two-level.yaml", y)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s/hosts=%d", c.form, c.hosts), func(b *testing.B) {
			write := p.WriteSimGrid
			if c.form == "full" {
				write = p.WriteSimGridFull
			}
			var n countWriter
			for b.Loop() {
				n = 0
				if err := write(&n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/1e6, "MB")
		})
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
