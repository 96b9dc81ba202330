package coll

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"netaware/comm"
	"netaware/comm/local"
)

// The reference table row by row, at both edges of every message range.
func TestOMPIFixedBcastTable(t *testing.T) {
	cases := []struct{ p, s, id int }{
		{2, 0, 3}, {3, 31, 3}, {3, 32, 5}, {2, 255, 5}, {2, 256, 3}, {2, 511, 3}, {2, 512, 7},
		{2, 1023, 7}, {2, 1024, 1}, {2, 32767, 1}, {2, 32768, 5}, {2, 131071, 5}, {2, 131072, 2},
		{2, 262143, 2}, {2, 262144, 1}, {2, 524287, 1}, {2, 524288, 6}, {2, 1048575, 6}, {2, 1048576, 5},
		{1, 0, 3},
		{4, 63, 5}, {7, 64, 6}, {4, 127, 6}, {4, 128, 5}, {4, 2047, 5}, {4, 2048, 6}, {4, 8191, 6},
		{4, 8192, 1}, {4, 1048575, 1}, {7, 1048576, 2},
		{8, 7, 7}, {8, 8, 5}, {8, 63, 5}, {8, 64, 7}, {15, 4095, 7}, {8, 4096, 5}, {8, 16383, 5},
		{8, 16384, 6}, {8, 32767, 6}, {8, 32768, 1},
		{16, 4095, 7}, {16, 4096, 6}, {31, 1048575, 6}, {16, 1048576, 8},
		{32, 2047, 6}, {63, 2048, 7},
		{64, 0, 7}, {127, 1 << 30, 7},
		{128, 1, 6}, {128, 2, 5}, {255, 16383, 5}, {128, 16384, 1}, {128, 32767, 1}, {128, 32768, 5},
		{128, 65535, 5}, {128, 65536, 7},
		{256, 16383, 7}, {256, 16384, 4}, {1023, 32767, 4}, {256, 32768, 7},
		{1024, 524287, 7}, {2047, 524288, 8},
		{2048, 262143, 7}, {4095, 262144, 8},
		{4096, 8191, 7}, {4096, 8192, 5}, {9999, 16383, 5}, {4096, 16384, 7}, {4096, 262143, 7}, {4096, 262144, 8},
	}
	for _, c := range cases {
		if got := OMPIFixedBcastID(c.p, c.s); got != c.id {
			t.Errorf("P=%d S=%d: algorithm %d, want %d", c.p, c.s, got, c.id)
		}
	}
}

func TestOMPIAlgorithmMapping(t *testing.T) {
	want := map[int]string{1: "linear", 2: "chain", 3: "chain", 4: "split-binary", 5: "binary", 6: "binomial", 7: "knomial", 8: "scatter-allgather", 9: "scatter-allgather-ring"}
	for id, name := range want {
		a, ok := OMPIAlgorithm(id)
		if !ok || a.Name != name || a.SegSize != 0 {
			t.Errorf("id %d -> %v, want %s unsegmented", id, a, name)
		}
		if _, err := a.Build(10, 3, nil); err != nil {
			t.Errorf("id %d: %v", id, err)
		}
	}
	if a, _ := OMPIAlgorithm(7); a.K != 4 {
		t.Errorf("knomial radix %d, want 4", a.K)
	}
	if _, ok := OMPIAlgorithm(10); ok {
		t.Error("id 10 mapped")
	}
}

func TestDecisionLookupAndJSON(t *testing.T) {
	d := &Decision{Version: 1, Rules: []DecisionRule{
		{MinRanks: 2, MaxRanks: 16, Sizes: []SizeRule{
			{BelowBytes: 4096, Algorithm: Algorithm{Name: "magpie", Level: 1}},
			{Algorithm: Algorithm{Name: "pipeline", SegSize: 8192}},
		}},
		{MinRanks: 17, Sizes: []SizeRule{{BelowBytes: 100, Algorithm: Algorithm{Name: "binomial"}}}},
	}}
	if err := d.Validate(threeGroups()); err != nil {
		t.Fatal(err)
	}
	check := func(p, n int, want string, ok bool) {
		t.Helper()
		a, found := d.Lookup(p, n)
		if found != ok || (ok && a.String() != want) {
			t.Errorf("Lookup(%d, %d) = %v %v, want %s %v", p, n, a, found, want, ok)
		}
	}
	check(8, 0, "magpie(level=1)", true)
	check(8, 4095, "magpie(level=1)", true)
	check(8, 4096, "pipeline(seg=8192)", true)
	check(17, 99, "binomial", true)
	check(17, 100, "", false)
	check(1, 10, "", false)
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := ParseDecision(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	b2, _ := d2.Marshal()
	if !bytes.Equal(b, b2) {
		t.Errorf("round trip changed the table:\n%s\n%s", b, b2)
	}
	// Auto: the table when it has a rule, Open MPI's decision otherwise.
	if a := Resolve(Auto, 20, 5000, d); a.Name != OMPIFixedBcast(20, 5000).Name {
		t.Errorf("auto without a rule -> %v", a)
	}
	if a := Resolve(Auto, 20, 50, d); a.Name != "binomial" {
		t.Errorf("auto with a rule -> %v", a)
	}
	if a := Resolve(Auto, 5, 50, nil); a != OMPIFixedBcast(5, 50) {
		t.Errorf("auto without a table -> %v", a)
	}
}

func TestDecisionRejectsBadTables(t *testing.T) {
	bad := []string{
		`{"version": 2, "rules": []}`,
		`{"version": 1, "rules": [{"min_ranks": 0, "sizes": [{"algorithm": {"name": "linear"}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 4, "max_ranks": 2, "sizes": [{"algorithm": {"name": "linear"}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": []}]}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"algorithm": {"name": "warp"}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"below_bytes": 10, "algorithm": {"name": "linear"}}, {"below_bytes": 5, "algorithm": {"name": "linear"}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"algorithm": {"name": "linear"}}, {"below_bytes": 5, "algorithm": {"name": "linear"}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"algorithm": {"name": "auto"}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"algorithm": {"name": "knomial", "k": 1}}]}]}`,
		`{"version": 1, "rules": [{"min_ranks": 2, "sizes": [{"algorithm": {"name": "linear", "seg_bytes": -1}}]}]}`,
		`{"version": 1, "rules": [], "extra": 1}`,
		`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"algorithm": {"name": "hierarchical", "base": "magpie"}}]}]}`,
		`not json`,
	}
	for _, b := range bad {
		if _, err := ParseDecision([]byte(b)); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
}

func FuzzParseDecision(f *testing.F) {
	f.Add([]byte(`{"version": 1, "rules": [{"min_ranks": 2, "max_ranks": 8, "sizes": [{"below_bytes": 64, "algorithm": {"name": "binomial"}}, {"algorithm": {"name": "pipeline", "seg_bytes": 4096}}]}]}`))
	f.Add([]byte(`{"version": 1, "rules": [{"min_ranks": 1, "sizes": [{"algorithm": {"name": "magpie2", "base": "binary", "level": 2}}]}]}`))
	f.Add([]byte(`{"version": 1, "rules": [{"min_ranks": 3, "sizes": [{"algorithm": {"name": "knomial", "k": 3}}]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDecision(data)
		if err != nil {
			return
		}
		// A table that parses must resolve and build for every size it
		// covers without a topology-aware entry.
		for _, r := range d.Rules {
			for _, s := range r.Sizes {
				a := Resolve(s.Algorithm, r.MinRanks, max(0, s.BelowBytes-1), nil)
				if registry[a.Name].info.TopologyAware || r.MinRanks > 4096 {
					continue
				}
				if _, err := a.Build(r.MinRanks, 0, nil); err != nil {
					t.Fatalf("parsed table entry %v does not build: %v", a, err)
				}
			}
		}
	})
}

func TestRegistryListsEveryAlgorithm(t *testing.T) {
	want := []string{"auto", "binary", "binary-swap", "binomial", "binomial-inorder", "chain", "dfs-pipeline", "hierarchical", "interpipe", "k-chain", "knomial", "linear", "magpie", "magpie2", "model-binomial", "ompi-fixed", "pipeline", "prim", "scatter-allgather", "scatter-allgather-ring", "split-binary", "traff"}
	var got []string
	for _, in := range Algorithms() {
		got = append(got, in.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("algorithms %v\nwant %v", got, want)
	}
	a := Algorithm{Name: "magpie2", SegSize: 8192, Level: 2, Base: "binary"}
	b, _ := json.Marshal(a)
	if string(b) != `{"name":"magpie2","seg_bytes":8192,"level":2,"base":"binary"}` {
		t.Errorf("JSON %s", b)
	}
}

// coll.Bcast with Auto: every size of the Open MPI table's first rows and
// message sizes crossing its thresholds deliver the bytes.
func TestBcastAutoFallsBackToOMPIFixed(t *testing.T) {
	for _, p := range []int{1, 2, 3, 4, 6, 9, 17, 33} {
		err := local.Run(context.Background(), p, func(ctx context.Context, c comm.Comm) error {
			for _, n := range []int{0, 1, 7, 31, 300, 2000, 5000, 20000, 40000, 150000} {
				want := pattern(n, p)
				buf := make([]byte, n)
				root := (n + p/2) % p
				if c.Rank() == root {
					copy(buf, want)
				}
				if err := Bcast(ctx, c, root, buf, Auto); err != nil {
					return err
				}
				if !bytes.Equal(buf, want) {
					return fmt.Errorf("n=%d (%v): wrong bytes at rank %d", n, OMPIFixedBcast(p, n), c.Rank())
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

func TestBcastWithDecisionAndTopology(t *testing.T) {
	tp := threeGroups()
	d := &Decision{Version: 1, Rules: []DecisionRule{{MinRanks: 8, MaxRanks: 8, Sizes: []SizeRule{
		{BelowBytes: 100, Algorithm: Algorithm{Name: "magpie"}},
		{Algorithm: Algorithm{Name: "hierarchical", Base: "scatter-allgather"}},
	}}}}
	err := local.Run(context.Background(), 8, func(ctx context.Context, c comm.Comm) error {
		for _, n := range []int{50, 5000} {
			want := pattern(n, 1)
			buf := make([]byte, n)
			if c.Rank() == 5 {
				copy(buf, want)
			}
			if err := Bcast(ctx, c, 5, buf, Auto, WithDecision(d), WithTopology(tp)); err != nil {
				return err
			}
			if !bytes.Equal(buf, want) {
				return fmt.Errorf("n=%d: wrong bytes at rank %d", n, c.Rank())
			}
		}
		// A topology-aware algorithm without a topology is an error, not a panic.
		if err := Bcast(ctx, c, 0, make([]byte, 4), Algorithm{Name: "magpie"}); err == nil {
			return fmt.Errorf("magpie without a topology succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReduceFloat64SumMaxMin(t *testing.T) {
	const p, n = 7, 1000
	s, err := Algorithm{Name: "knomial", K: 3, SegSize: 100}.Build(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	val := func(r, i int) float64 { return float64((r*31+i*7)%101) - 50 }
	err = local.Run(context.Background(), p, func(ctx context.Context, c comm.Comm) error {
		mine := make([]float64, n)
		for i := range mine {
			mine[i] = val(c.Rank(), i)
		}
		for _, op := range []Op{SumFloat64, MaxFloat64, MinFloat64} {
			var out []byte
			if c.Rank() == s.Root {
				out = make([]byte, 8*n)
			}
			if err := s.Reduce(ctx, c, Float64Bytes(mine), out, op); err != nil {
				return err
			}
			if c.Rank() != s.Root {
				continue
			}
			got := BytesFloat64(out)
			for i := range n {
				want := val(0, i)
				for r := 1; r < p; r++ {
					switch op.Name {
					case "sum-float64":
						want += val(r, i)
					case "max-float64":
						want = math.Max(want, val(r, i))
					default:
						want = math.Min(want, val(r, i))
					}
				}
				if got[i] != want {
					return fmt.Errorf("%s element %d = %v, want %v", op.Name, i, got[i], want)
				}
			}
		}
		// 12 bytes are not whole float64 elements.
		if err := s.Reduce(ctx, c, make([]byte, 12), make([]byte, 12), SumFloat64); err == nil {
			return fmt.Errorf("partial element accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAlltoallvExactBytes(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5, 8, 13} {
		cnt := func(i, j int) int { return (i*7 + j*3) % 11 } // i sends cnt(i,j) bytes to j
		b := func(i, j, k int) byte { return byte(i*37 + j*11 + k) }
		err := local.Run(context.Background(), p, func(ctx context.Context, c comm.Comm) error {
			me := c.Rank()
			sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
			var send []byte
			for j := range p {
				sd[j], sc[j] = len(send), cnt(me, j)
				for k := range sc[j] {
					send = append(send, b(me, j, k))
				}
			}
			total := 0
			for i := range p {
				rd[i], rc[i] = total, cnt(i, me)
				total += rc[i]
			}
			recv := make([]byte, total)
			if err := Alltoallv(ctx, c, send, sc, sd, recv, rc, rd); err != nil {
				return err
			}
			for i := range p {
				for k := range rc[i] {
					if recv[rd[i]+k] != b(i, me, k) {
						return fmt.Errorf("rank %d: byte %d from %d wrong", me, k, i)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

// Operations reject a schedule built for another size instead of hanging.
func TestOperationsRejectMismatchedSchedule(t *testing.T) {
	s, _ := Binomial(4, 0)
	err := local.Run(context.Background(), 3, func(ctx context.Context, c comm.Comm) error {
		if err := s.Bcast(ctx, c, make([]byte, 10)); err == nil {
			return fmt.Errorf("bcast with a 4-rank schedule on 3 ranks succeeded")
		}
		var nilSched *Schedule
		if err := nilSched.Bcast(ctx, c, make([]byte, 1)); err == nil {
			return fmt.Errorf("nil schedule accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Any algorithm, size, root and parameters either build a valid schedule
// whose broadcast delivers every byte, or fail with an error; never panic.
func FuzzBuild(f *testing.F) {
	f.Add(uint8(0), uint16(7), uint16(3), int32(0), int8(0), uint8(0), uint8(1))
	f.Add(uint8(12), uint16(33), uint16(32), int32(100), int8(3), uint8(2), uint8(2))
	f.Add(uint8(20), uint16(1), uint16(0), int32(-5), int8(-1), uint8(9), uint8(0))
	infos := Algorithms()
	f.Fuzz(func(t *testing.T, ai uint8, p16, root16 uint16, seg int32, k int8, level, variant uint8) {
		p, root := int(p16%200), int(root16%220)
		in := infos[int(ai)%len(infos)]
		a := Algorithm{Name: in.Name, SegSize: int(seg % 5000), K: int(k), Level: int(level % 5)}
		if in.UsesBase {
			a.Base = []string{"", "binary", "split-binary", "scatter-allgather-ring", "magpie", "nope"}[int(variant)%6]
		}
		if in.UsesVariant {
			a.Variant = []string{"", "dfs-max", "bfs-min", "ready", "plain", "bogus"}[int(variant)%6]
		}
		a = Resolve(a, p, int(seg%3000), nil)
		env := Env{Bytes: 100, Cost: func(i, j, m int) float64 { return float64((i*7+j*3)%5+1) + float64(m)*1e-9 }}
		if p > 0 {
			env.Topo = synthTopo(p, p%3 == 0)
		}
		s, err := a.BuildEnv(p, root, env)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%v P=%d root %d: invalid schedule: %v", a, p, root, err)
		}
		n := int(seg%300) + 300
		cnt, err := symBcast(s, n)
		if err != nil {
			t.Fatalf("%v P=%d root %d: %v", a, p, root, err)
		}
		for r := range p {
			for b := range n {
				if r != root && cnt[r][b] == 0 {
					t.Fatalf("%v P=%d root %d: rank %d misses byte %d", a, p, root, r, b)
				}
			}
		}
	})
}

// A decision with levels-allreduce (topology-aware, with a variant) is
// valid on a topology, and a wrong variant is caught by the build on it.
func TestDecisionValidatesLevelsAllreduce(t *testing.T) {
	tp := threeGroups()
	d := &Decision{Version: 1, Rules: []DecisionRule{{MinRanks: tp.Size, MaxRanks: tp.Size, Sizes: []SizeRule{
		{Algorithm: Algorithm{Name: "levels-allreduce", Variant: "rabenseifner", Base: "binomial", Level: 1}},
	}}}}
	if err := d.Validate(tp); err != nil {
		t.Fatal(err)
	}
	d.Rules[0].Sizes[0].Algorithm.Variant = "warp"
	if err := d.Validate(tp); err == nil || !strings.Contains(err.Error(), "warp") {
		t.Fatalf("variant warp: %v", err)
	}
}
