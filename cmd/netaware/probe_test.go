package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"netaware/dataset"
)

func TestProbeCLILocalEveryProbe(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.json")
	runs := [][]string{
		{"probe", "rtt", "--local", "4", "--out", out},
		{"probe", "plogp", "--local", "4", "--out", out, "--max-size", "256", "--reps", "2", "--sat-max", "40"},
		{"probe", "hockney", "--local", "4", "--out", out, "--max-size", "1KiB", "--reps", "2", "--schedule", "hierarchical", "--topology", exampleTopologyFor4(t)},
		{"probe", "bandwidth", "--local", "4", "--out", out, "--size", "64KiB", "--reps", "2", "--ranks", "0-2"},
		{"probe", "pattern", "--local", "4", "--out", out, "--links", "0>1,2>1", "--size", "1KiB", "--max-iter", "20"},
		{"probe", "identity", "--local", "4", "--out", out},
	}
	for _, args := range runs {
		if _, err := runTopoCLI(t, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	ds, err := dataset.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if ds.World.Kind != "local" || ds.World.Size != 4 || len(ds.Ranks) != 4 {
		t.Errorf("world %+v, %d ranks", ds.World, len(ds.Ranks))
	}
	if len(ds.RTT.Pairs) != 6 || len(ds.PLogP.Pairs) != 6 || len(ds.Hockney.Pairs) != 6 || len(ds.Bandwidth.Pairs) != 3 {
		t.Errorf("pairs: rtt %d plogp %d hockney %d bandwidth %d", len(ds.RTT.Pairs), len(ds.PLogP.Pairs), len(ds.Hockney.Pairs), len(ds.Bandwidth.Pairs))
	}
	if ds.Hockney.Schedule.Mode != "hierarchical" || ds.Hockney.Schedule.Tree == nil {
		t.Errorf("hockney schedule %+v", ds.Hockney.Schedule)
	}
	if len(ds.Patterns.Patterns) != 1 || len(ds.Patterns.Patterns[0].Times) != 2 {
		t.Errorf("patterns %+v", ds.Patterns)
	}
}

// exampleTopologyFor4 writes a two-group topology of four ranks.
func exampleTopologyFor4(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.json")
	doc := `{"version":1,"size":4,"ranks":[{"rank":0},{"rank":1},{"rank":2},{"rank":3}],"levels":[{"name":"host","groups":[[0,1],[2,3]]}]}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProbeCLIUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"probe", "plogp", "--local", "2", "--max-size", "3x"},
		{"probe", "rtt", "--local", "2", "--ranks", "5-1"},
		{"probe", "rtt", "--local", "2", "--sync", "maybe"},
		{"probe", "pattern", "--local", "2"},
		{"probe", "pattern", "--local", "2", "--links", "0>0"},
		{"probe", "rtt", "--local", "2", "--schedule", "hierarchical", "--topology", "truth"},
	} {
		_, err := runTopoCLI(t, args...)
		if !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	// a schedule needing groups without them is an ordinary failure
	if _, err := runTopoCLI(t, "probe", "rtt", "--local", "2", "--out", filepath.Join(t.TempDir(), "x.json"), "--schedule", "hierarchical"); err == nil {
		t.Error("hierarchical schedule without --topology accepted")
	}
}

func TestParseRankList(t *testing.T) {
	got, err := parseRankList("3, 0-2,2")
	if err != nil || len(got) != 4 || got[0] != 0 || got[3] != 3 {
		t.Errorf("got %v %v", got, err)
	}
	for _, bad := range []string{"a", "-1", "3-1", "1-"} {
		if _, err := parseRankList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// rankPID finds the process of the given rank among the children of
// launcher (Linux /proc).
func rankPID(launcher, rank int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat)[i+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(launcher) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == "NETAWARE_RANK="+strconv.Itoa(rank) {
				return pid
			}
		}
	}
	return 0
}

// Over TCP with 'netaware launch -n 8': kill -9 of the campaign driver (rank
// 0, which writes the dataset) part way, then the same command with
// --resume completes the campaign and keeps every pair checkpointed before.
func TestProbeResumeAfterKill9OverTCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs 8 processes")
	}
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	bin := netawareBinary(t)
	out := filepath.Join(t.TempDir(), "d.json")
	args := []string{"launch", "-n", "8", "--grace", "1s", "--", bin, "probe", "plogp", "--out", out, "--quiet",
		"--checkpoint", "0s", "--max-size", "16KiB", "--reps", "4", "--sat-max", "320"}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var before *dataset.Dataset
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ds, err := dataset.Load(out); err == nil && ds.PLogP != nil && len(ds.PLogP.Pairs) >= 3 {
			before = ds
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if before == nil {
		cmd.Process.Kill()
		t.Fatal("no checkpoint with 3 pairs within 60 s")
	}
	pid := rankPID(cmd.Process.Pid, 0)
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("rank 0 process not found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Log("campaign finished before the kill landed")
	}
	killed, err := dataset.Load(out)
	if err != nil {
		t.Fatalf("dataset after kill -9: %v", err)
	}
	if killed.PLogP.Complete {
		t.Skip("campaign completed before the kill; nothing to resume")
	}
	kept := len(killed.PLogP.Pairs)
	t.Logf("killed rank 0 with %d of %d pairs checkpointed", kept, killed.PLogP.PairsTotal)
	res := exec.Command(bin, append(args[:len(args):len(args)], "--resume")...)
	if o, err := res.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, o)
	}
	final, err := dataset.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !final.PLogP.Complete || len(final.PLogP.Pairs) != 28 || final.PLogP.Runs != 2 {
		t.Fatalf("after resume: %d pairs, complete %v, runs %d", len(final.PLogP.Pairs), final.PLogP.Complete, final.PLogP.Runs)
	}
	a, _ := json.Marshal(killed.PLogP.Pairs)
	b, _ := json.Marshal(final.PLogP.Pairs[:kept])
	if string(a) != string(b) {
		t.Error("pairs checkpointed before the kill changed on resume")
	}
}

func TestProgressReporterQuietAndLate(t *testing.T) {
	var buf strings.Builder
	p := &progressReporter{w: &buf, start: time.Now(), desc: "x"}
	p.update(1, 10) // within the first two seconds: no bar
	if p.bar != nil || buf.Len() != 0 {
		t.Error("bar drawn for a short campaign")
	}
	p.start = time.Now().Add(-3 * time.Second)
	p.update(2, 10)
	if p.bar == nil {
		t.Error("no bar after two seconds")
	}
	q := &progressReporter{w: &buf, quiet: true, start: time.Now().Add(-time.Hour)}
	q.update(1, 10)
	if q.bar != nil {
		t.Error("--quiet drew a bar")
	}
}

func FuzzParseRankList(f *testing.F) {
	for _, s := range []string{"0-7,12", "3", "", "1-", "5-1", "0-1048577", " 2 , 4-5 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRankList(s)
		if err != nil {
			return
		}
		for i := 1; i < len(r); i++ {
			if r[i] <= r[i-1] {
				t.Fatalf("%q: not strictly ascending: %v", s, r)
			}
		}
	})
}

func FuzzParseLinks(f *testing.F) {
	for _, s := range []string{"0>1,2>1", "", "1>1", "a>b", ">", "3 > 4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLinks(s)
		if err != nil {
			return
		}
		for _, x := range l {
			if x.Src == x.Dst || x.Src < 0 || x.Dst < 0 {
				t.Fatalf("%q: bad link %v", s, x)
			}
		}
	})
}

// TestDiscoverProgressOnStderrOnly: discover's phases go to stderr, with
// --json stdout holds the JSON alone, and --quiet (global) silences them.
func TestDiscoverProgressOnStderrOnly(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		args := []string{"discover", "--platform", "../../discover/testdata/fram-4nodes.yaml", "--blind", "--json", "--out", t.TempDir()}
		if quiet {
			args = append(args, "--quiet")
		}
		root := newRootCmd()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		var s discoverSummary
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("--quiet=%v: stdout is not the JSON alone: %v\n%s", quiet, err, out.String())
		}
		phases := strings.Contains(errOut.String(), "] rtt tree inference over ")
		if phases == quiet {
			t.Errorf("--quiet=%v: stderr %q", quiet, errOut.String())
		}
	}
}

func TestPhaseProgressBarPerPhase(t *testing.T) {
	var buf strings.Builder
	p := &phaseProgress{w: &buf, start: time.Now()}
	p.phase("one")
	p.cur.start = time.Now().Add(-3 * time.Second) // a long phase
	p.advance(1, 4)
	if !strings.Contains(buf.String(), "one") || p.cur.bar == nil {
		t.Fatalf("no bar for a long phase: %q", buf.String())
	}
	p.phase("two") // the first phase's bar is cleared
	if p.cur.bar != nil || !strings.Contains(buf.String(), "] two\n") {
		t.Errorf("second phase: %q", buf.String())
	}
	p.finish()
}

// TestProgressETAFromTheFirstCount: the ETA extrapolates the rate since
// the first count seen, so that pairs kept from an interrupted run do not
// pass for speed: 10 kept, 10 more in 10 s, 80 left: 80 s.
func TestProgressETAFromTheFirstCount(t *testing.T) {
	t0 := time.Now()
	p := &progressReporter{desc: "plogp", base: 10, baseTime: t0}
	if got := p.describeETA(20, 100, t0.Add(10*time.Second)); got != "plogp, ETA 1m20s" {
		t.Errorf("got %q", got)
	}
	if got := p.describeETA(10, 100, t0.Add(time.Second)); got != "plogp" {
		t.Errorf("no count moved yet: got %q", got)
	}
}
