package tune

// MPI acceptance: the rule files tune writes are read and applied by real
// Open MPI and MPICH. The tests compile testdata/bcast_check.c and run it on
// 4 local ranks; they skip when the MPI packages are absent (Debian:
// apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev).
//
// "Applied" is shown without a debug build of either library: a probe copy
// of the file replaces the algorithm of one size range with one the library
// cannot run (Open MPI: algorithm id 99, which MPI_Bcast rejects with
// MPI_ERR_ARG; MPICH: the inter-communicator algorithm, which crashes on an
// intra-communicator). Broadcasts whose size falls in that range fail and
// the others pass, which proves the library maps sizes onto our rules at
// exactly our boundaries.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/coll"
	"netaware/comm/sim"
)

const mpiRanks = 4

// probeRanges are three size ranges with algorithms both libraries have.
var probeRanges = []Range{
	{FromBytes: 0, BelowBytes: 2048, Algorithm: coll.Algorithm{Name: "binomial"}},
	{FromBytes: 2048, BelowBytes: 65536, Algorithm: coll.Algorithm{Name: "scatter-allgather"}},
	{FromBytes: 65536, Algorithm: coll.Algorithm{Name: "scatter-allgather-ring"}},
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: skipping the MPI acceptance test (Debian: apt-get install -y openmpi-bin libopenmpi-dev mpich libmpich-dev)", tool)
		}
	}
}

func compileCheck(t *testing.T, mpicc string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/bcast_check.c")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bcast_check")
	out, err := exec.Command(mpicc, "-O1", "-o", bin, src).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", mpicc, err, out)
	}
	return bin
}

// runMPI runs the check program on mpiRanks ranks for the given sizes and
// returns its output and whether it succeeded.
func runMPI(t *testing.T, argv []string, env []string, sizes ...int) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string(nil), argv[1:]...)
	for _, s := range sizes {
		args = append(args, strconv.Itoa(s))
	}
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	ok := err == nil && strings.Contains(string(out), fmt.Sprintf("bcast_check ok P=%d", mpiRanks))
	if ctx.Err() != nil {
		t.Fatalf("%v timed out:\n%s", argv, out)
	}
	return string(out), ok
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tunedFiles runs the tuner on a 4-rank slice of the test platform and
// returns its outputs: the files a user would hand to the library.
func tunedFiles(t *testing.T) *Outputs {
	t.Helper()
	tunedOnce.Do(func() { tunedOut, tunedErr = tuneFour(t) })
	if tunedErr != nil {
		t.Fatal(tunedErr)
	}
	return tunedOut
}

var (
	tunedOnce sync.Once
	tunedOut  *Outputs
	tunedErr  error
)

func tuneFour(t *testing.T) (*Outputs, error) {
	p, err := tinyPlatform(t).Place(1, "block")
	if err != nil {
		return nil, err
	}
	if p.NumRanks() != mpiRanks {
		return nil, fmt.Errorf("tuning platform has %d ranks", p.NumRanks())
	}
	tp := truthOf(p)
	algs, err := Candidates(p.NumRanks(), tp, CandidateOptions{SegSizes: []int{16384}})
	if err != nil {
		return nil, err
	}
	algs = append([]coll.Algorithm{Baseline}, algs...)
	cfg := BenchConfig{Topology: tp, Sizes: []int{1, 1024, 65536, 1 << 20}, Reps: 3, Warmup: 1}
	ms, err := simRun(p, sim.Options{}, cfg, algs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Version: ReportVersion, Platform: p.Name, Ranks: p.NumRanks(), Measurements: ms, SizesBytes: cfg.Sizes}
	out, err := Decide(rep, tp, []string{"MPI acceptance test"})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func ompiMajor(t *testing.T) int {
	cmd := exec.Command("mpirun.openmpi", "--version")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`\((?:Open MPI|OpenRTE)\)\s+(\d+)\.`).FindSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

func TestOpenMPIReadsAndAppliesRules(t *testing.T) {
	needTools(t, "mpicc.openmpi", "mpirun.openmpi")
	bin := compileCheck(t, "mpicc.openmpi")
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,vader,tcp"}
	run := func(rules string, sizes ...int) (string, bool) {
		argv := []string{"mpirun.openmpi", "--oversubscribe", "-n", strconv.Itoa(mpiRanks),
			"--mca", "coll_tuned_use_dynamic_rules", "1",
			"--mca", "coll_tuned_dynamic_rules_filename", rules, bin}
		return runMPI(t, argv, env, sizes...)
	}
	classic := func(rs []Range) string {
		rules, err := OMPIRules(rs)
		if err != nil {
			t.Fatal(err)
		}
		s, err := WriteOMPIClassic([]string{"probe"}, []OMPIBlock{{Ranks: mpiRanks, Rules: rules}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("tuned file runs", func(t *testing.T) {
		out := tunedFiles(t)
		if out.OMPIConf == "" {
			t.Fatal("no Open MPI rules")
		}
		if o, ok := run(writeTemp(t, "ompi-rules.conf", []byte(out.OMPIConf)), 1, 1000, 100000, 1<<20); !ok {
			t.Fatalf("Open MPI with the tuned rules:\n%s\nrules:\n%s", o, out.OMPIConf)
		}
	})
	good := classic(probeRanges)
	if o, ok := run(writeTemp(t, "good.conf", []byte(good)), 1, 2047, 2048, 65535, 65536, 300000); !ok {
		t.Fatalf("Open MPI with the probe rules:\n%s", o)
	}
	for i, r := range probeRanges {
		rules, _ := OMPIRules(probeRanges)
		rules[i].Alg = 99
		text, err := WriteOMPIClassic([]string{fmt.Sprintf("range %d disabled", i)}, []OMPIBlock{{Ranks: mpiRanks, Rules: rules}})
		if err != nil {
			t.Fatal(err)
		}
		path := writeTemp(t, fmt.Sprintf("probe%d.conf", i), []byte(text))
		if o, ok := run(path, max(r.FromBytes, 1)); ok {
			t.Errorf("range %d: a %d-byte broadcast did not use rule %d (ok=%v):\n%s", i, max(r.FromBytes, 1), i, ok, o)
		}
		if i > 0 {
			if o, ok := run(path, r.FromBytes-1); !ok {
				t.Errorf("range %d: a %d-byte broadcast used the disabled rule:\n%s", i, r.FromBytes-1, o)
			}
		}
	}
	t.Run("json rules", func(t *testing.T) {
		if v := ompiMajor(t); v < 6 {
			t.Skipf("Open MPI %d reads only the classic rules file (the JSON reader is in Open MPI 6.0)", v)
		}
		rules, _ := OMPIRules(probeRanges)
		b, err := WriteOMPIJSON([]OMPIBlock{{Ranks: mpiRanks, Rules: rules}})
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := run(writeTemp(t, "rules.json", b), 1, 2048, 65536); !ok {
			t.Fatalf("Open MPI with JSON rules:\n%s", o)
		}
	})
}

func TestMPICHReadsAndAppliesSelection(t *testing.T) {
	needTools(t, "mpicc.mpich", "mpirun.mpich")
	bin := compileCheck(t, "mpicc.mpich")
	run := func(file string, sizes ...int) (string, bool) {
		argv := []string{"mpirun.mpich", "-n", strconv.Itoa(mpiRanks), bin}
		return runMPI(t, argv, []string{"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=" + file}, sizes...)
	}
	mranges := func(rs []Range) []MPICHRange {
		var out []MPICHRange
		for _, r := range rs {
			name, _, ok := MPICHEquivalent(r.Algorithm, nil)
			if !ok {
				t.Fatalf("%s has no MPICH equivalent", r.Algorithm)
			}
			out = append(out, MPICHRange{FromBytes: r.FromBytes, BelowBytes: r.BelowBytes, Algorithm: name})
		}
		return out
	}
	t.Run("tuned file runs", func(t *testing.T) {
		out := tunedFiles(t)
		if out.MPICHJSON == nil {
			t.Fatal("no MPICH file")
		}
		if o, ok := run(writeTemp(t, "mpich-coll.json", out.MPICHJSON), 1, 1000, 100000, 1<<20); !ok {
			t.Fatalf("MPICH with the tuned selection:\n%s\nfile:\n%s", o, out.MPICHJSON)
		}
	})
	// MPICH's binomial tree is binomial-inorder (Open MPI's is not).
	mprobe := slices.Clone(probeRanges)
	mprobe[0].Algorithm = coll.Algorithm{Name: "binomial-inorder"}
	good, err := WriteMPICH([]MPICHBlock{{Ranks: mpiRanks, Ranges: mranges(mprobe)}})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := run(writeTemp(t, "good.json", good), 1, 2047, 2048, 65535, 65536, 300000); !ok {
		t.Fatalf("MPICH with the probe selection:\n%s", o)
	}
	for i, r := range mprobe {
		mr := mranges(mprobe)
		mr[i].Algorithm = mpichInterBcast
		b, err := WriteMPICH([]MPICHBlock{{Ranks: mpiRanks, Ranges: mr}})
		if err != nil {
			t.Fatal(err)
		}
		path := writeTemp(t, fmt.Sprintf("probe%d.json", i), b)
		if o, ok := run(path, max(r.FromBytes, 1)); ok {
			t.Errorf("range %d: a %d-byte broadcast did not use rule %d:\n%s", i, max(r.FromBytes, 1), i, o)
		}
		if i > 0 {
			if o, ok := run(path, r.FromBytes-1); !ok {
				t.Errorf("range %d: a %d-byte broadcast used the disabled rule:\n%s", i, r.FromBytes-1, o)
			}
		}
	}
}

// probeAt is where collective i of Collectives switches, in the probe
// files of TestOpenMPIAppliesEveryCollective and
// TestMPICHAppliesEveryCollective, from a good algorithm to one the
// library rejects: a different size per collective, so that two
// collectives' sections swapped in the file would move the boundaries. The
// sizes are whole floats and whole blocks on mpiRanks ranks; probeAt(i) -
// probeStep is the largest such size below the boundary.
func probeAt(i int) int { return 32768 + 8192*i }

const probeStep = 4 * mpiRanks

// goodRule is an algorithm Open MPI runs for each collective, through the
// same mapping tune uses.
var goodRule = map[Collective]coll.Algorithm{
	Bcast:         {Name: "binomial"},
	Scatter:       {Name: "binomial"},
	Gather:        {Name: "binomial"},
	Reduce:        {Name: "binomial"},
	Allgather:     {Name: "scatter-allgather-ring"},
	Allreduce:     {Name: "ring"},
	ReduceScatter: {Name: "ring"},
}

// compileCollCheck builds testdata/coll_check.c with mpicc.
func compileCollCheck(t *testing.T, mpicc string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/coll_check.c")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "coll_check")
	if out, err := exec.Command(mpicc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", mpicc, err, out)
	}
	return bin
}

// runCollCheck runs coll_check under argv and reports whether every
// expectation of ops held (within the time given).
func runCollCheck(argv, env []string, within time.Duration, ops ...string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], ops...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err == nil && ctx.Err() == nil && strings.Contains(string(out), fmt.Sprintf("coll_check ok P=%d", mpiRanks))
}

// One Open MPI rules file holds all seven collectives; collective i's
// rule from probeAt(i) bytes on is algorithm 99, which Open MPI rejects
// with an error on every rank (MPI_ERRORS_RETURN: the program goes on).
// In one run, every collective passes at the largest size below its
// boundary and fails at the boundary: each collective's id, and the
// message size Open MPI compares, are the ones tune writes.
func TestOpenMPIAppliesEveryCollective(t *testing.T) {
	needTools(t, "mpicc.openmpi", "mpirun.openmpi")
	bin := compileCollCheck(t, "mpicc.openmpi")
	var secs []OMPISection
	var ops []string
	for i, k := range Collectives {
		good, ok := OMPIEquivalentFor(k, goodRule[k], mpiRanks)
		if !ok {
			t.Fatalf("%s: %s has no Open MPI equivalent", k, goodRule[k])
		}
		rules := []OMPIRule{good, {FromBytes: probeAt(i), Alg: 99, Note: "probe"}}
		secs = append(secs, OMPISection{Collective: k, Blocks: []OMPIBlock{{Ranks: mpiRanks, Rules: rules}}})
		ops = append(ops, fmt.Sprintf("%s:%d", k, probeAt(i)-probeStep), fmt.Sprintf("%s:%d!", k, probeAt(i)))
	}
	text, err := WriteOMPIRules([]string{"probe"}, secs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(text, "# collective id:"); n != len(Collectives) {
		t.Fatalf("%d collectives in the file", n)
	}
	path := writeTemp(t, "probe.conf", []byte(text))
	argv := []string{"mpirun.openmpi", "--oversubscribe", "-n", strconv.Itoa(mpiRanks),
		"--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "coll_tuned_dynamic_rules_filename", path, bin}
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,vader,tcp"}
	if out, ok := runCollCheck(argv, env, 90*time.Second, ops...); !ok {
		t.Fatalf("coll_check %v:\n%s\nrules:\n%s", ops, out, text)
	}
}

// mpichGood is an MPICH algorithm of each collective for the probe file.
var mpichGood = map[Collective]string{
	Bcast: MPICHBinomial, Scatter: MPICHScatterBinomial, Gather: MPICHGatherBinomial, Reduce: MPICHReduceBinomial,
	Allgather: MPICHAllgatherRing, Allreduce: MPICHAllreduceRD, ReduceScatter: MPICHReduceScatterHalving,
}

// The MPICH counterpart of TestOpenMPIAppliesEveryCollective: collective
// i's range from probeAt(i) bytes on names an algorithm of another
// collective, which MPICH refuses by ending the job, so each failure is a
// run of its own. MPICH compares avg_msg_size for bcast, reduce and
// allreduce and total_msg_size for the others (mpichSizeKey); a wrong key
// or size moves a boundary or crashes the first run.
func TestMPICHAppliesEveryCollective(t *testing.T) {
	needTools(t, "mpicc.mpich", "mpirun.mpich")
	bin := compileCollCheck(t, "mpicc.mpich")
	var secs []MPICHSection
	var below []string
	for i, k := range Collectives {
		wrong := mpichGood[Scatter]
		if k == Scatter {
			wrong = mpichGood[Gather]
		}
		rs := []MPICHRange{{BelowBytes: probeAt(i), Algorithm: mpichGood[k]}, {FromBytes: probeAt(i), Algorithm: wrong}}
		secs = append(secs, MPICHSection{Collective: k, Blocks: []MPICHBlock{{Ranks: mpiRanks, Ranges: rs}}})
		below = append(below, fmt.Sprintf("%s:%d", k, probeAt(i)-probeStep))
	}
	b, err := WriteMPICHRules(secs)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "probe.json", b)
	argv := []string{"mpirun.mpich", "-n", strconv.Itoa(mpiRanks), bin}
	env := []string{"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=" + path}
	if out, ok := runCollCheck(argv, env, 90*time.Second, below...); !ok {
		t.Fatalf("every collective below its boundary %v:\n%s\nfile:\n%s", below, out, b)
	}
	for i, k := range Collectives {
		if out, ok := runCollCheck(argv, env, 30*time.Second, fmt.Sprintf("%s:%d", k, probeAt(i))); ok {
			t.Errorf("%s of %d bytes did not use its probe rule:\n%s", k, probeAt(i), out)
		}
	}
}
