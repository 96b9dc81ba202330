package tune

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"netaware/coll"
	"netaware/comm/sim"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		k       Collective
		p, n, w int
	}{
		{Bcast, 8, 1, 1},
		{"", 8, 1000, 1000},
		{Allreduce, 8, 1, 4},
		{Reduce, 8, 1024, 1024},
		{Allreduce, 8, 1026, 1028},
		{Gather, 8, 1, 8},
		{Scatter, 6, 1 << 20, 1048578}, // 174763 bytes per rank
		{Allgather, 8, 65536, 65536},
		{ReduceScatter, 8, 1, 32},
		{ReduceScatter, 6, 1000, 1008},
		{Allreduce, 8, 0, 0},
	} {
		if got := c.k.Normalize(c.p, c.n); got != c.w {
			t.Errorf("%s.Normalize(%d, %d) = %d, want %d", c.k, c.p, c.n, got, c.w)
		}
	}
	for _, s := range []string{"reduce-scatter", "reduce_scatter", " allreduce"} {
		if _, err := ParseCollective(s); err != nil {
			t.Errorf("ParseCollective(%q): %v", s, err)
		}
	}
	if _, err := ParseCollective("alltoall"); err == nil || !strings.Contains(err.Error(), "allgather") {
		t.Errorf("ParseCollective(alltoall) = %v, want an error listing the collectives", err)
	}
}

// Every candidate of every collective runs on the simulated tiny
// platform (topology-aware ones on its ground truth): none fails to build
// or to run, so a live tune never stops on an unsupported combination.
func TestEveryCandidateRunsEveryCollective(t *testing.T) {
	p := tinyPlatform(t)
	tp := truthOf(p)
	for _, k := range Collectives[1:] {
		t.Run(string(k), func(t *testing.T) {
			algs, err := Candidates(p.NumRanks(), tp, CandidateOptions{Collective: k, SegSizes: []int{16384}, Bases: []string{"binomial"}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := BenchConfig{Collective: k, Topology: tp, Sizes: []int{1000, 70000}, Reps: 1, Warmup: -1}
			ms, err := simRun(p, sim.Options{NoNoise: true}, cfg, algs)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 2*len(algs) {
				t.Fatalf("%d measurements of %d algorithms x 2 sizes", len(ms), len(algs))
			}
			names := map[string]bool{}
			for _, m := range ms {
				names[m.Algorithm.Name] = true
				if m.Err != "" || m.Stats.Kept != 1 || !(m.Stats.MeanS > 0) || m.Collective != k {
					t.Errorf("%s %d bytes: %+v", m.Label, m.Bytes, m)
				}
				if m.Bytes != k.Normalize(16, m.Bytes) || m.Bytes < 1000 {
					t.Errorf("%s: measured %d bytes, not a normalized size", m.Label, m.Bytes)
				}
			}
			exch := names["ring"] || names["rabenseifner"]
			if exch != (k == Allreduce || k == ReduceScatter) {
				t.Errorf("exchange algorithms among the candidates of %s: %v", k, exch)
			}
			if !names["binomial"] || !names["hierarchical"] {
				t.Errorf("candidates of %s lack binomial or hierarchical: %v", k, names)
			}
		})
	}
}

// meas is a hand-built measurement with a fixed mean.
func meas(k Collective, a coll.Algorithm, bytes int, s float64) Measurement {
	return Measurement{Collective: k, Algorithm: a, Label: a.String(), Ranks: 8, Resolved: a, Bytes: bytes,
		TimesS: []float64{s}, Stats: Summarize([]float64{s})}
}

// A hand-built allreduce benchmark on 8 ranks: recursive doubling wins at
// 1 KiB, ring at 1 MiB; at 16 MiB the topology-aware dfs-ring wins and the
// files get the fastest algorithm each library runs (Open MPI:
// rabenseifner; MPICH, which has no ring: rabenseifner at 1 MiB too).
func TestDecideAllreduceHandBuilt(t *testing.T) {
	rd := coll.Algorithm{Name: "recursive-doubling"}
	ring := coll.Algorithm{Name: "ring"}
	rab := coll.Algorithm{Name: "rabenseifner"}
	dfs := coll.Algorithm{Name: "dfs-ring"}
	bin := coll.Algorithm{Name: "binomial"}
	var ms []Measurement
	for _, row := range []struct {
		bytes              int
		rd, ring, rab, dfs float64
		bin                float64
	}{
		{1024, 1e-4, 5e-4, 2e-4, 6e-4, 3e-4},
		{1 << 20, 9e-3, 4e-3, 5e-3, 4.5e-3, 2e-2},
		{16 << 20, 0.2, 0.07, 0.06, 0.03, 0.4},
	} {
		ms = append(ms, meas(Allreduce, rd, row.bytes, row.rd), meas(Allreduce, ring, row.bytes, row.ring),
			meas(Allreduce, rab, row.bytes, row.rab), meas(Allreduce, dfs, row.bytes, row.dfs), meas(Allreduce, bin, row.bytes, row.bin))
	}
	// A broadcast measured in the same run goes into the same files.
	ms = append(ms, meas(Bcast, bin, 1024, 1e-4), meas(Bcast, coll.Algorithm{Name: "scatter-allgather"}, 1024, 2e-4))
	p := tinyPlatform(t)
	pl, err := p.Place(2, "block")
	if err != nil {
		t.Fatal(err)
	}
	tp := truthOf(pl)
	if tp.Size != 8 {
		t.Fatalf("placed platform has %d ranks", tp.Size)
	}
	rep := &Report{Version: ReportVersion, Platform: "hand", Ranks: 8, Measurements: ms}
	out, err := Decide(rep, tp, []string{"hand-built"})
	if err != nil {
		t.Fatal(err)
	}
	want := `# hand-built
2 # number of collectives
2 # collective id: allreduce
1 # number of communicator sizes
8 # communicator size
3 # number of message sizes
0 3 0 0 # recursive-doubling
32768 4 0 0 # ring
4194304 6 0 0 # rabenseifner
7 # collective id: bcast
1 # number of communicator sizes
8 # communicator size
1 # number of message sizes
0 6 0 0 # binomial
`
	if out.OMPIConf != want {
		t.Errorf("Open MPI rules:\n%s\nwant:\n%s", out.OMPIConf, want)
	}
	d := out.Decisions[Allreduce]
	for _, c := range []struct {
		n    int
		want coll.Algorithm
	}{{1024, rd}, {32767, rd}, {32768, ring}, {4194303, ring}, {4194304, dfs}} {
		if a, ok := d.Lookup(8, c.n); !ok || a != c.want {
			t.Errorf("decision at %d bytes: %v, want %v", c.n, a, c.want)
		}
	}
	if out.Decision == nil || out.Decisions[Bcast] != out.Decision {
		t.Error("the broadcast's decision is not Outputs.Decision")
	}
	// MPICH runs neither ring nor dfs-ring: recursive doubling, then
	// reduce_scatter_allgather from the 1 KiB/1 MiB boundary on.
	k := keysInOrder(t, out.MPICHJSON, "collective=allreduce", "comm_type=intra", "comm_size<=8")
	if !reflect.DeepEqual(k, []string{"avg_msg_size<=32767", "avg_msg_size=any"}) {
		t.Errorf("MPICH allreduce size keys %v", k)
	}
	var doc map[string]map[string]map[string]map[string]map[string]any
	if err := json.Unmarshal(out.MPICHJSON, &doc); err != nil {
		t.Fatal(err)
	}
	got := doc["collective=allreduce"]["comm_type=intra"]["comm_size<=8"]["avg_msg_size=any"]
	if _, ok := got["algorithm="+MPICHAllreduceRSAG]; !ok {
		t.Errorf("MPICH allreduce above 32 KiB: %v", got)
	}
	if strings.Count(string(out.MPICHJSON), `"collective=allreduce"`) != 1 || !strings.Contains(string(out.MPICHJSON), `"collective=gather"`) {
		t.Error("MPICH file: allreduce not exactly once or a fallback collective missing")
	}
	var choices int
	for _, c := range rep.Choices {
		if c.Collective == Allreduce {
			choices++
			if c.Bytes == 16<<20 && (c.OMPI == nil || c.OMPI.Label != "rabenseifner" || c.OMPI.SameAsBest || c.BestBlind == nil || c.BestBlind.Label != "rabenseifner") {
				t.Errorf("16 MiB choice %+v", c)
			}
		}
	}
	if choices != 3 {
		t.Errorf("%d allreduce choices, want 3", choices)
	}
}

func TestOMPIRulesRejectDuplicateCollective(t *testing.T) {
	bl := []OMPIBlock{{Ranks: 4, Rules: []OMPIRule{{Alg: 1}}}}
	if _, err := WriteOMPIRules(nil, []OMPISection{{Allreduce, bl}, {Allreduce, bl}}); err == nil {
		t.Error("a collective given twice was accepted")
	}
	if _, err := WriteOMPIRules(nil, []OMPISection{{"alltoall", bl}}); err == nil {
		t.Error("an unknown collective was accepted")
	}
}

func TestOMPIEquivalentForIDs(t *testing.T) {
	for _, c := range []struct {
		k     Collective
		a     coll.Algorithm
		p     int
		alg   int
		fan   int
		seg   int
		valid bool
	}{
		{Scatter, coll.Algorithm{Name: "binomial"}, 8, 2, 0, 0, true},
		{Scatter, coll.Algorithm{Name: "linear"}, 8, 1, 0, 0, true},
		{Gather, coll.Algorithm{Name: "binomial", SegSize: 8192}, 8, 0, 0, 0, false},
		{Reduce, coll.Algorithm{Name: "pipeline", SegSize: 32768}, 8, 3, 0, 32768, true},
		{Reduce, coll.Algorithm{Name: "k-chain", K: 3}, 8, 2, 3, 0, true},
		{Reduce, coll.Algorithm{Name: "binomial", SegSize: 8192}, 8, 5, 0, 8192, true},
		{Allgather, coll.Algorithm{Name: "scatter-allgather"}, 8, 3, 0, 0, true},
		{Allgather, coll.Algorithm{Name: "scatter-allgather"}, 6, 0, 0, 0, false}, // Open MPI runs Bruck
		{Allgather, coll.Algorithm{Name: "scatter-allgather-ring"}, 6, 4, 0, 0, true},
		{Allreduce, coll.Algorithm{Name: "rabenseifner"}, 8, 6, 0, 0, true},
		{Allreduce, coll.Algorithm{Name: "dfs-ring"}, 8, 0, 0, 0, false},
		{ReduceScatter, coll.Algorithm{Name: "ring"}, 8, 3, 0, 0, true},
	} {
		r, ok := OMPIEquivalentFor(c.k, c.a, c.p)
		if ok != c.valid || (ok && (r.Alg != c.alg || r.FanInOut != c.fan || r.SegBytes != c.seg)) {
			t.Errorf("%s %s on %d: %+v %v", c.k, c.a, c.p, r, ok)
		}
	}
}

// The MPICH file of two tuned collectives, byte for byte: allreduce's smp
// range is guarded by the node hierarchy with allreduce's general algorithm
// otherwise, gather compares total_msg_size, and the untuned collectives
// follow with their general algorithms.
func TestWriteMPICHRulesGolden(t *testing.T) {
	b, err := WriteMPICHRules([]MPICHSection{
		{Collective: Allreduce, Blocks: []MPICHBlock{{Ranks: 8, Ranges: []MPICHRange{
			{BelowBytes: 4096, Algorithm: MPICHAllreduceRD},
			{FromBytes: 4096, Algorithm: MPICHAllreduceSMP}}}}},
		{Collective: Gather, Blocks: []MPICHBlock{{Ranks: 8, Ranges: []MPICHRange{{Algorithm: MPICHGatherBinomial}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "collective=allreduce": {
    "comm_type=intra": {
      "comm_size<=8": {
        "avg_msg_size<=4095": {
          "algorithm=MPIR_Allreduce_intra_recursive_doubling": {}
        },
        "avg_msg_size=any": {
          "comm_hierarchy=parent": {
            "algorithm=MPIR_Allreduce_intra_smp": {}
          },
          "comm_hierarchy=any": {
            "algorithm=MPIR_Allreduce_intra_recursive_doubling": {}
          }
        }
      },
      "comm_size=any": {
        "algorithm=MPIR_Allreduce_intra_recursive_doubling": {}
      }
    },
    "comm_type=inter": {
      "algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast": {}
    }
  },
  "collective=gather": {
    "comm_type=intra": {
      "comm_size<=8": {
        "total_msg_size=any": {
          "algorithm=MPIR_Gather_intra_binomial": {}
        }
      },
      "comm_size=any": {
        "algorithm=MPIR_Gather_intra_binomial": {}
      }
    },
    "comm_type=inter": {
      "algorithm=MPIR_Gather_inter_linear": {}
    }
  },
  "collective=bcast": {`
	if !strings.HasPrefix(string(b), want) {
		t.Fatalf("MPICH file starts:\n%s\nwant:\n%s", b[:min(len(b), len(want)+200)], want)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// Every collective of mpichFallback once, bcast among them (not
	// tuned: MPICH asserts on a collective the file does not match).
	if len(doc) != len(mpichFallback) || doc["collective=bcast"] == nil {
		t.Errorf("%d collectives in the file, want %d with bcast", len(doc), len(mpichFallback))
	}
	if _, err := WriteMPICHRules([]MPICHSection{{Collective: Gather, Blocks: []MPICHBlock{{Ranks: 8, Ranges: []MPICHRange{{Algorithm: "x"}}}}},
		{Collective: Gather, Blocks: []MPICHBlock{{Ranks: 8, Ranges: []MPICHRange{{Algorithm: "x"}}}}}}); err == nil {
		t.Error("gather given twice was accepted")
	}
}
