package tune

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"netaware/coll"
	"netaware/comm/sim"
	"netaware/model"
	"netaware/platform"
	"netaware/topo"
)

func TestReinfjellKeepWithin90thPercentile(t *testing.T) {
	xs := []float64{5, 1, 2, 3, 4, 6, 7, 8, 9, 100}
	kept := WithinPercentile(xs, 90)
	if want := []float64{5, 1, 2, 3, 4, 6, 7, 8, 9}; !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %v, want %v (the outlier above the 90th percentile dropped)", kept, want)
	}
	st := Summarize(xs)
	if st.N != 10 || st.Kept != 9 || st.MeanS != 5 || st.MinS != 1 || st.MaxS != 9 || st.Median != 5 {
		t.Fatalf("stats %+v", st)
	}
	if math.Abs(st.VarS2-7.5) > 1e-12 {
		t.Fatalf("variance %g, want 7.5", st.VarS2)
	}
	if st := Summarize(nil); st.Kept != 0 || !math.IsNaN(st.MeanS) {
		t.Fatalf("empty: %+v", st)
	}
}

func TestRangesGeometricBoundariesAndMerge(t *testing.T) {
	bin := coll.Algorithm{Name: "binomial"}
	pipe := coll.Algorithm{Name: "pipeline", SegSize: 8192}
	picks := []Pick{
		{Bytes: 1, Algorithm: bin}, {Bytes: 1024, Algorithm: bin},
		{Bytes: 4096, Algorithm: pipe}, {Bytes: 1 << 20, Algorithm: pipe},
		{Bytes: 4 << 20, Algorithm: bin},
	}
	got := Ranges(picks)
	// sqrt(1024*4096) = 2048; sqrt(1 MiB * 4 MiB) = 2 MiB.
	want := []Range{
		{FromBytes: 0, BelowBytes: 2048, Algorithm: bin},
		{FromBytes: 2048, BelowBytes: 2 << 20, Algorithm: pipe},
		{FromBytes: 2 << 20, Algorithm: bin},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ranges %+v\nwant %+v", got, want)
	}
	d, err := Decision([]SizeRanges{{Ranks: 16, Ranges: got}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    int
		want coll.Algorithm
	}{{0, bin}, {2047, bin}, {2048, pipe}, {2<<20 - 1, pipe}, {2 << 20, bin}, {1 << 30, bin}} {
		if a, ok := d.Lookup(16, c.n); !ok || a != c.want {
			t.Errorf("lookup(16, %d) = %v, want %v", c.n, a, c.want)
		}
	}
	if _, ok := d.Lookup(17, 100); ok {
		t.Errorf("decision applies to 17 ranks; it was tuned for 16")
	}
}

func TestOMPIClassicGoldenByHand(t *testing.T) {
	rules, err := OMPIRules([]Range{
		{FromBytes: 0, BelowBytes: 2048, Algorithm: coll.Algorithm{Name: "binomial"}},
		{FromBytes: 2048, BelowBytes: 65536, Algorithm: coll.Algorithm{Name: "pipeline", SegSize: 8192}},
		{FromBytes: 65536, BelowBytes: 1 << 20, Algorithm: coll.Algorithm{Name: "k-chain", K: 4, SegSize: 32768}},
		{FromBytes: 1 << 20, Algorithm: coll.Algorithm{Name: "scatter-allgather-ring"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := WriteOMPIClassic([]string{"tuned by netaware"}, []OMPIBlock{{Ranks: 16, Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	want := `# tuned by netaware
1 # number of collectives
7 # collective id: bcast
1 # number of communicator sizes
16 # communicator size
4 # number of message sizes
0 6 0 0 # binomial
2048 3 0 8192 # pipeline(seg=8192)
65536 2 4 32768 # k-chain(seg=32768,k=4)
1048576 9 0 0 # scatter-allgather-ring
`
	if got != want {
		t.Fatalf("classic rules file:\n%s\nwant:\n%s", got, want)
	}
	// No zero-padded number anywhere (the reader's %li reads them as octal).
	for _, line := range strings.Split(got, "\n") {
		for _, f := range strings.Fields(strings.SplitN(line, "#", 2)[0]) {
			if len(f) > 1 && f[0] == '0' {
				t.Errorf("zero-padded number %q in %q", f, line)
			}
		}
	}
}

func TestOMPIClassicRejects(t *testing.T) {
	r := []OMPIRule{{FromBytes: 0, Alg: 6}}
	cases := [][]OMPIBlock{
		nil,
		{{Ranks: 0, Rules: r}},
		{{Ranks: 4, Rules: []OMPIRule{{FromBytes: 10, Alg: 6}}}},
		{{Ranks: 4, Rules: []OMPIRule{{FromBytes: 0, Alg: 6}, {FromBytes: 0, Alg: 5}}}},
		{{Ranks: 8, Rules: r}, {Ranks: 4, Rules: r}},
	}
	for i, c := range cases {
		if _, err := WriteOMPIClassic(nil, c); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if _, err := OMPIRules([]Range{{Algorithm: coll.Algorithm{Name: "magpie"}}}); err == nil {
		t.Errorf("magpie mapped onto Open MPI")
	}
}

func TestOMPIJSONGoldenByHand(t *testing.T) {
	b, err := WriteOMPIJSON([]OMPIBlock{{Ranks: 16, Rules: []OMPIRule{
		{FromBytes: 0, Alg: 6}, {FromBytes: 2048, Alg: 3, SegBytes: 8192}, {FromBytes: 65536, Alg: 2, FanInOut: 4, SegBytes: 32768},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(`{"rule_file_version": 3, "module": "tuned", "collectives": {"bcast": [
	  {"comm_size_min": 16, "rules": [
	    {"msg_size_min": 0, "msg_size_max": 2047, "alg": 6},
	    {"msg_size_min": 2048, "msg_size_max": 65535, "alg": 3, "seg_size": 8192},
	    {"msg_size_min": 65536, "msg_size_max": "inf", "alg": 2, "faninout": 4, "seg_size": 32768}]}]}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("json rules:\n%s", b)
	}
}

// keysInOrder returns the keys of the JSON object at path, in file order.
func keysInOrder(t *testing.T, data []byte, path ...string) []string {
	t.Helper()
	var raw map[string]json.RawMessage
	cur := data
	for _, p := range path {
		if err := json.Unmarshal(cur, &raw); err != nil {
			t.Fatal(err)
		}
		cur = raw[p]
	}
	dec := json.NewDecoder(strings.NewReader(string(cur)))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 {
				keys = append(keys, v)
				// Skip the value.
				var skip json.RawMessage
				_ = dec.Decode(&skip)
			}
		}
	}
	return keys
}

func TestMPICHSelectionGrammar(t *testing.T) {
	b, err := WriteMPICH([]MPICHBlock{{Ranks: 16, Ranges: []MPICHRange{
		{FromBytes: 0, Algorithm: MPICHBinomial},
		{FromBytes: 12288, Algorithm: MPICHSMP},
		{FromBytes: 524288, Algorithm: MPICHScatterRing},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) || strings.Contains(string(b), `\u003c`) {
		t.Fatalf("not plain JSON:\n%s", b)
	}
	if k := keysInOrder(t, b, "collective=bcast"); !reflect.DeepEqual(k, []string{"comm_type=intra", "comm_type=inter"}) {
		t.Fatalf("bcast keys %v", k)
	}
	if k := keysInOrder(t, b, "collective=bcast", "comm_type=intra"); !reflect.DeepEqual(k, []string{"comm_size<=16", "comm_size=any"}) {
		t.Fatalf("comm size keys %v", k)
	}
	k := keysInOrder(t, b, "collective=bcast", "comm_type=intra", "comm_size<=16")
	if !reflect.DeepEqual(k, []string{"avg_msg_size<=12287", "avg_msg_size<=524287", "avg_msg_size=any"}) {
		t.Fatalf("message size keys %v", k)
	}
	if k := keysInOrder(t, b, "collective=bcast", "comm_type=intra", "comm_size<=16", "avg_msg_size<=524287"); !reflect.DeepEqual(k, []string{"comm_hierarchy=parent", "comm_hierarchy=any"}) {
		t.Fatalf("smp not guarded by comm_hierarchy: %v", k)
	}
	// Every collective MPICH 4.0 selects through the file is present.
	top := keysInOrder(t, b)
	for _, c := range []string{"collective=bcast", "collective=reduce", "collective=allreduce", "collective=barrier", "collective=ibcast", "collective=ineighbor_alltoallw"} {
		if !strings.Contains(strings.Join(top, " "), c) {
			t.Errorf("%s missing", c)
		}
	}
}

func TestMPICHEquivalents(t *testing.T) {
	lv := func(l int) string { return map[int]string{1: "socket", 2: "host", 3: "all"}[l] }
	cases := []struct {
		a     coll.Algorithm
		name  string
		exact bool
		ok    bool
	}{
		{coll.Algorithm{Name: "binomial-inorder"}, MPICHBinomial, true, true},
		{coll.Algorithm{Name: "binomial"}, "", false, false}, // Open MPI's tree: other ranks in it
		{coll.Algorithm{Name: "scatter-allgather"}, MPICHScatterRDAG, true, true},
		{coll.Algorithm{Name: "scatter-allgather-ring"}, MPICHScatterRing, true, true},
		{coll.Algorithm{Name: "magpie2", Level: 2, Base: "binomial"}, MPICHSMP, false, true},
		{coll.Algorithm{Name: "magpie2", Level: 1, Base: "binomial"}, "", false, false},
		{coll.Algorithm{Name: "pipeline", SegSize: 8192}, "", false, false},
		{coll.Algorithm{Name: "binomial-inorder", SegSize: 8192}, "", false, false}, // MPICH does not segment
	}
	for _, c := range cases {
		n, e, ok := MPICHEquivalent(c.a, lv)
		if n != c.name || e != c.exact || ok != c.ok {
			t.Errorf("%s: %q %v %v", c.a, n, e, ok)
		}
	}
}

func tinyPlatform(t testing.TB) *platform.Platform {
	p, err := platform.Load("testdata/tiny-2racks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func truthOf(p *platform.Platform) *topo.Topology {
	return TruthTopology(p.TruthLevels(), p.NumRanks())
}

func TestCandidatesCoverLevelsAndSegments(t *testing.T) {
	p := tinyPlatform(t)
	tp := truthOf(p)
	algs, err := Candidates(p.NumRanks(), tp, CandidateOptions{SegSizes: []int{8192, 65536}})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, a := range algs {
		have[a.String()] = true
	}
	for _, want := range []string{"binomial", "pipeline(seg=8192)", "pipeline(seg=65536)", "magpie(level=1)", "magpie(level=3)", "hierarchical(base=binomial)", "dfs-pipeline(seg=65536)", "knomial(k=4)", "interpipe(seg=8192,level=2)"} {
		if !have[want] {
			t.Errorf("candidate %s missing (have %v)", want, have)
		}
	}
	// Every tree Open MPI segments is tried whole and at every segment
	// size; linear and the scatter-allgathers take none.
	for _, want := range []string{"binomial(seg=8192)", "binary", "binary(seg=65536)", "split-binary(seg=8192)", "knomial(seg=65536,k=4)", "chain(seg=8192)", "k-chain(seg=8192,k=4)"} {
		if !have[want] {
			t.Errorf("segmented candidate %s missing", want)
		}
	}
	for _, a := range algs {
		if a.SegSize > 0 && (a.Name == "linear" || a.Name == "scatter-allgather" || a.Name == "scatter-allgather-ring") {
			t.Errorf("%s: Open MPI takes no segment size for it", a)
		}
	}
	if one, _ := Candidates(4, nil, CandidateOptions{Names: []string{"binomial"}, SegSizes: []int{8192}}); !reflect.DeepEqual(one,
		[]coll.Algorithm{{Name: "binomial"}, {Name: "binomial", SegSize: 8192}}) {
		t.Errorf("binomial candidates %v, want whole and 8 KiB", one)
	}
	// Level 4 ("all") is one group: not a two-level split.
	if have["magpie(level=4)"] {
		t.Errorf("single-group level offered")
	}
	blind, _ := Candidates(p.NumRanks(), nil, CandidateOptions{})
	for _, a := range blind {
		if IsTopologyAware(a) {
			t.Errorf("topology-aware %s offered without a topology", a)
		}
	}
	if _, err := Candidates(4, nil, CandidateOptions{Names: []string{"nope"}}); err == nil {
		t.Errorf("unknown algorithm accepted")
	}
}

func TestTuneEndToEndTinyPlatform(t *testing.T) {
	p := tinyPlatform(t)
	tp := truthOf(p)
	algs := []coll.Algorithm{
		Baseline,
		{Name: "binomial"}, {Name: "pipeline", SegSize: 8192}, {Name: "scatter-allgather-ring"},
		{Name: "hierarchical", Base: "binomial"}, {Name: "magpie2", Level: 2, Base: "binomial"},
	}
	cfg := BenchConfig{Topology: tp, Sizes: []int{8, 65536, 1 << 20}, Reps: 5, Warmup: 1}
	ms, err := simRun(p, sim.Options{}, cfg, algs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(algs)*3 {
		t.Fatalf("%d measurements", len(ms))
	}
	for _, m := range ms {
		if m.Err != "" || m.Stats.N+m.Invalid != 5 || m.Stats.Kept == 0 || m.Stats.MeanS <= 0 {
			t.Fatalf("%s at %d: %+v", m.Label, m.Bytes, m)
		}
		// A broadcast cannot beat the slowest NIC: 1 Gbps for the bytes
		// that must leave the root's host at least once.
		if m.Bytes == 1<<20 && m.Stats.MinS < float64(m.Bytes)/(1e9/8) {
			t.Fatalf("%s: %g s for 1 MiB beats the 1 Gbps NIC", m.Label, m.Stats.MinS)
		}
	}
	rep := &Report{Version: ReportVersion, Platform: p.Name, Ranks: p.NumRanks(), TopologySource: "platform ground truth", Reps: 5, Warmup: 1, SizesBytes: cfg.Sizes, Measurements: ms}
	out, err := Decide(rep, tp, []string{"test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Choices {
		if c.Speedup < 1-1e-9 && c.Best.Algorithm != Baseline {
			t.Errorf("%d bytes: best %s slower than the baseline (%g)", c.Bytes, c.Best.Label, c.Speedup)
		}
		if c.OMPI == nil || c.OMPI.MeanS < c.Best.MeanS {
			t.Errorf("%d bytes: Open MPI choice %+v", c.Bytes, c.OMPI)
		}
	}
	// The decision table's choice at each measured size is the best measured.
	for _, c := range rep.Choices {
		a, ok := out.Decision.Lookup(p.NumRanks(), c.Bytes)
		if !ok || a != c.Best.Algorithm {
			t.Errorf("decision at %d bytes: %v, best %v", c.Bytes, a, c.Best.Algorithm)
		}
	}
	dir := t.TempDir()
	files, err := out.WriteAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Fatalf("wrote %v", files)
	}
	d, err := coll.ReadDecisionFile(filepath.Join(dir, "decision.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(tp); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, _ := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Measurements) != len(ms) {
		t.Fatalf("bench.json: %v", err)
	}
}

func TestHarnessIsDeterministic(t *testing.T) {
	p := tinyPlatform(t)
	cfg := BenchConfig{Sizes: []int{4096}, Reps: 3, Warmup: 1}
	a, err := simRun(p, sim.Options{Seed: 7}, cfg, []coll.Algorithm{{Name: "binomial"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := simRun(p, sim.Options{Seed: 7}, cfg, []coll.Algorithm{{Name: "binomial"}})
	if !reflect.DeepEqual(a[0].TimesS, b[0].TimesS) {
		t.Fatalf("same seed, different times: %v %v", a[0].TimesS, b[0].TimesS)
	}
}

// The decision table drives coll.Auto: measured through Auto it costs what
// the chosen algorithm costs measured directly (noise off: same schedule,
// same simulated time up to the barrier's skew).
func TestDecisionDrivesCollAuto(t *testing.T) {
	p := tinyPlatform(t).WithoutNoise()
	tp := truthOf(p)
	algs := []coll.Algorithm{Baseline, {Name: "binomial"}, {Name: "pipeline", SegSize: 8192}, {Name: "magpie2", Level: 2, Base: "binomial"}}
	cfg := BenchConfig{Topology: tp, Sizes: []int{1024, 1 << 20}, Reps: 2, Warmup: 1}
	ms, err := simRun(p, sim.Options{}, cfg, algs)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Ranks: p.NumRanks(), Measurements: ms}
	out, err := Decide(rep, tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Decision = out.Decision
	auto, err := simRun(p, sim.Options{}, cfg, []coll.Algorithm{coll.Auto})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Choices {
		a := auto[i]
		if want := coll.Resolve(c.Best.Algorithm, p.NumRanks(), c.Bytes, nil); a.Resolved != want {
			t.Errorf("%d bytes: auto ran %s, decision chose %s (%s)", c.Bytes, a.Resolved, c.Best.Algorithm, want)
		}
		// Same schedule, same simulated time, up to the skew of the barrier
		// before each repetition (it depends on the traffic before it).
		if math.Abs(a.Stats.MeanS-c.Best.MeanS) > 1e-4*c.Best.MeanS+1e-6 {
			t.Errorf("%d bytes: auto %g s, %s measured %g s", c.Bytes, a.Stats.MeanS, c.Best.Label, c.Best.MeanS)
		}
	}
}

func TestTuneSeveralCommunicatorSizes(t *testing.T) {
	p := tinyPlatform(t)
	tp := truthOf(p)
	algs := []coll.Algorithm{Baseline, {Name: "binomial"}, {Name: "pipeline", SegSize: 8192}, {Name: "magpie2", Level: 2, Base: "binomial"}}
	cfg := BenchConfig{Topology: tp, Sizes: []int{1024, 1 << 20}, Reps: 2, Warmup: 1, CommSizes: []int{4, 16}}
	ms, err := simRun(p, sim.Options{}, cfg, algs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, m := range ms {
		count[m.Ranks]++
		if m.Err != "" || m.Stats.Kept == 0 {
			t.Fatalf("%d ranks %s %d bytes: %+v", m.Ranks, m.Label, m.Bytes, m)
		}
	}
	if count[4] != 8 || count[16] != 8 {
		t.Fatalf("measurements per size: %v", count)
	}
	rep := &Report{Ranks: p.NumRanks(), Measurements: ms}
	out, err := Decide(rep, tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Decision.Rules) != 2 || out.Decision.Rules[0].MinRanks != 4 || out.Decision.Rules[0].MaxRanks != 4 || out.Decision.Rules[1].MinRanks != 16 || out.Decision.Rules[1].MaxRanks != 16 {
		t.Fatalf("decision rules %+v", out.Decision.Rules)
	}
	if !strings.Contains(out.OMPIConf, "2 # number of communicator sizes\n4 # communicator size\n") || !strings.Contains(out.OMPIConf, "\n16 # communicator size\n") {
		t.Fatalf("Open MPI rules:\n%s", out.OMPIConf)
	}
	var oj OMPIJSON
	if err := json.Unmarshal(out.OMPIJSON, &oj); err != nil {
		t.Fatal(err)
	}
	if b := oj.Collectives["bcast"]; len(b) != 2 || b[0].CommSizeMin != 4 || b[0].CommSizeMax != 15 || b[1].CommSizeMin != 16 || b[1].CommSizeMax != 0 {
		t.Fatalf("Open MPI JSON blocks %+v", oj.Collectives["bcast"])
	}
	if k := keysInOrder(t, out.MPICHJSON, "collective=bcast", "comm_type=intra"); !reflect.DeepEqual(k, []string{"comm_size<=4", "comm_size<=16", "comm_size=any"}) {
		t.Fatalf("MPICH communicator sizes %v", k)
	}
	// A 4-rank communicator is the first host: the host level is one group,
	// so magpie2 at that level cannot beat binomial by using it.
	for _, c := range rep.Choices {
		if c.Ranks != 4 && c.Ranks != 16 {
			t.Fatalf("choice for %d ranks", c.Ranks)
		}
	}
	if _, err := simRun(p, sim.Options{}, BenchConfig{Sizes: []int{1}, CommSizes: []int{16, 4}}, algs[:1]); err == nil {
		t.Errorf("descending communicator sizes accepted")
	}
}

func TestRestrictTopology(t *testing.T) {
	tp := truthOf(tinyPlatform(t))
	r, err := Restrict(tp, 6)
	if err != nil {
		t.Fatal(err)
	}
	if r.Size != 6 || len(r.Levels) != len(tp.Levels) {
		t.Fatalf("restricted %+v", r)
	}
	// host level: {0..3}, {4, 5}.
	if !reflect.DeepEqual(r.Levels[1].Groups, [][]int{{0, 1, 2, 3}, {4, 5}}) {
		t.Fatalf("host level %v", r.Levels[1].Groups)
	}
	if _, err := Restrict(tp, 17); err == nil {
		t.Errorf("restrict beyond the topology accepted")
	}
	if x, _ := Restrict(nil, 3); x != nil {
		t.Errorf("nil topology restricted to %+v", x)
	}
}

// tinyModel is a heterogeneous Hockney model of the test platform: ranks
// of one host talk through shared memory, others through two 1 Gbps NICs.
func tinyModel(t testing.TB) *model.HeteroHockney {
	p := tinyPlatform(t)
	n := p.NumRanks()
	h := model.NewHeteroHockney(n, model.Hockney{})
	for i := range n {
		for j := range n {
			m := model.Hockney{AlphaS: 220e-6, BetaSPerByte: 8e-9}
			if p.RankHost(i) == p.RankHost(j) {
				m = model.Hockney{AlphaS: 1e-6, BetaSPerByte: 5e-11}
			}
			_ = h.Set(i, j, m)
		}
	}
	return h
}

func TestPerformanceAwareCandidatesWithModel(t *testing.T) {
	p := tinyPlatform(t)
	h := tinyModel(t)
	algs, err := Candidates(p.NumRanks(), nil, CandidateOptions{Names: []string{"binomial", "model-binomial", "prim", "traff"}, Cost: h.Time})
	if err != nil {
		t.Fatal(err)
	}
	if len(algs) != 1+len(DefaultSegSizes)+3 || algs[0].Name != "binomial" {
		t.Fatalf("candidates %v (blind first, whole and segmented, then the three model-based builders)", algs)
	}
	if none, _ := Candidates(p.NumRanks(), nil, CandidateOptions{Names: []string{"prim"}}); len(none) != 0 {
		t.Fatalf("prim offered without a model: %v", none)
	}
	cfg := BenchConfig{Sizes: []int{1024, 1 << 20}, Reps: 2, Warmup: 1, Cost: h.Time}
	ms, err := simRun(p, sim.Options{}, cfg, append([]coll.Algorithm{Baseline}, algs...))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Err != "" || m.Stats.Kept == 0 {
			t.Fatalf("%s at %d: %+v", m.Label, m.Bytes, m)
		}
	}
	rep := &Report{Ranks: p.NumRanks(), Measurements: ms}
	if _, err := Decide(rep, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Choices {
		if c.BestBlind == nil || !IsBlind(c.BestBlind.Algorithm) {
			t.Errorf("%d bytes: best blind %+v", c.Bytes, c.BestBlind)
		}
		t.Logf("%d bytes: best %s %.4g s, binomial-class blind %s %.4g s", c.Bytes, c.Best.Label, c.Best.MeanS, c.BestBlind.Label, c.BestBlind.MeanS)
	}
}

// The Open MPI file breaks near-ties (within 5 %) towards eager-sized
// segments and then the fewest segments; a clear winner stays. Times are
// the live figures of tune-proof.sh on star-2x4-cyclic (docs/tuning.md).
func TestOMPIPicksPreferFewHandshakes(t *testing.T) {
	m := func(name string, seg, bytes int, mean float64) Measurement {
		a := coll.Algorithm{Name: name, SegSize: seg}
		return Measurement{Algorithm: a, Label: a.String(), Bytes: bytes, Stats: Stats{N: 3, Kept: 3, MeanS: mean}}
	}
	const mib = 1 << 20
	ms := []Measurement{
		m("binary", 131072, mib, 0.0867), m("binary", 8192, mib, 0.0878), m("binary", 32768, mib, 0.0886),
		m("binomial", 32768, mib, 0.0907), m("binomial", 0, mib, 0.1069), m("knomial", 0, mib, 0.3504),
		m("binary", 131072, 16*mib, 1.408), m("binomial", 8192, 16*mib, 1.445), m("binomial", 32768, 16*mib, 1.465),
		m("binary", 0, 16*mib, 1.74),
		// 64 KiB: a 128 KiB segment is the whole message, one segment,
		// but a rendezvous (64 KiB is not below the eager limit): the
		// tied 8 KiB segments go eagerly.
		m("binomial", 131072, 65536, 0.0040), m("binomial", 8192, 65536, 0.0041),
		// 32 KiB: whole is eager and one segment.
		m("binomial", 0, 32768, 0.0030), m("binomial", 8192, 32768, 0.0029),
		// 4 MiB: the 128 KiB segments win clearly, so they stay.
		m("binary", 131072, 4*mib, 1.0), m("binary", 32768, 4*mib, 1.2),
	}
	got := OMPIPicks(ms, func(coll.Algorithm) bool { return true })
	want := map[int]string{32768: "binomial", 65536: "binomial(seg=8192)", mib: "binary(seg=32768)", 4 * mib: "binary(seg=131072)", 16 * mib: "binomial(seg=32768)"}
	if len(got) != len(want) {
		t.Fatalf("picks %+v", got)
	}
	for _, p := range got {
		if p.Label != want[p.Bytes] {
			t.Errorf("%d bytes: picked %s, want %s", p.Bytes, p.Label, want[p.Bytes])
		}
	}
	// Only what accept admits is picked.
	only := OMPIPicks(ms, func(a coll.Algorithm) bool { return a.Name == "knomial" })
	if len(only) != 1 || only[0].Label != "knomial" {
		t.Errorf("knomial only: %+v", only)
	}
}
