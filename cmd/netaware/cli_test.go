package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"netaware/dataset"
)

// runCLI runs a command line in this process as main does and returns its
// output and exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// groups returns the command paths (without "netaware") of every command
// that has subcommands, the root included.
func groups(c *cobra.Command, path []string) [][]string {
	if !c.HasSubCommands() {
		return nil
	}
	all := [][]string{path}
	for _, sub := range c.Commands() {
		all = append(all, groups(sub, append(append([]string{}, path...), sub.Name()))...)
	}
	return all
}

func TestUnknownSubcommandIsUsageError(t *testing.T) {
	paths := groups(newRootCmd(), nil)
	names := map[string]bool{}
	for _, p := range paths {
		names[strings.Join(p, " ")] = true
	}
	// The groups the issue names must be among those walked, so that the
	// walk cannot silently miss them.
	for _, want := range []string{"", "probe", "topo", "sim", "bench", "tune", "platform", "completion"} {
		if !names[want] {
			t.Fatalf("command group %q not found among %v", want, paths)
		}
	}
	for _, p := range paths {
		name := strings.Join(append([]string{"netaware"}, p...), " ")
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append(append([]string{}, p...), "bogus")...)
			if code != exitUsage {
				t.Errorf("%s bogus: exit %d, want %d (stdout %q)", name, code, exitUsage, stdout)
			}
			if !strings.Contains(stderr, `unknown command "bogus"`) || !strings.HasPrefix(stderr, name) {
				t.Errorf("%s bogus: stderr %q does not name the command and the word", name, stderr)
			}
			if stdout != "" {
				t.Errorf("%s bogus printed help to stdout: %.100q", name, stdout)
			}
			// Without a word, a group prints its help and succeeds.
			if p != nil {
				stdout, _, code = runCLI(t, p...)
				if code != exitOK || !strings.Contains(stdout, "Usage:") {
					t.Errorf("%s: exit %d, output %.100q; want its help and exit 0", name, code, stdout)
				}
			}
		})
	}
}

func TestUnknownSubcommandSuggests(t *testing.T) {
	_, stderr, code := runCLI(t, "topo", "shw")
	if code != exitUsage || !strings.Contains(stderr, "did you mean show?") {
		t.Errorf("topo shw: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "help", "probe", "bogus")
	if code != exitUsage || !strings.Contains(stderr, `no command "probe bogus"`) {
		t.Errorf("help probe bogus: exit %d, stderr %q", code, stderr)
	}
}

// TestEmptyRankSetIsUsageError: a rank set without a pair, and a command
// line naming no world, are wrong command lines (exit 2).
func TestEmptyRankSetIsUsageError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"probe", "rtt", "--local", "4", "--ranks", "0"}, "one rank makes no pair"},
		{[]string{"probe", "rtt", "--local", "4", "--ranks", "2-2"}, "one rank makes no pair"},
		{[]string{"probe", "plogp", "--local", "4", "--ranks", ","}, "bad rank"},
		{[]string{"probe", "rtt", "--local", "4", "--ranks", "1,7"}, "rank 7, but the world has 4 ranks"},
		{[]string{"probe", "rtt", "--local", "1"}, "1 rank(s) to measure make no pair"},
		{[]string{"probe", "pattern", "--local", "4", "--nodes", "3", "--random", "2"}, "one node has no link"},
		{[]string{"probe", "rtt", "--local", "-1"}, "--local -1: want a number of ranks"},
		{[]string{"probe", "rtt"}, "no world: give --platform"},
	} {
		dir := t.TempDir()
		args := append(append([]string{}, tc.args...), "--out", dir+"/d.json")
		_, stderr, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestOutputFilesAre0644: every file a command writes is readable by all,
// the dataset too (it came out 0600 while topology.json was 0644), under a
// strict umask as well.
func TestOutputFilesAre0644(t *testing.T) {
	// Every command that writes files, under a umask that would make
	// them private: every file it leaves is 0644 (internal/atomicfile).
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	truth, _, code := runCLI(t, "platform", "truth", "zhu-2racks", "--json")
	in := filepath.Join(t.TempDir(), "truth.json")
	if err := os.WriteFile(in, []byte(truth), 0o600); code != exitOK || err != nil {
		t.Fatalf("platform truth: exit %d, %v", code, err)
	}
	for _, args := range [][]string{
		{"discover", "--platform", "zhu-2racks", "--level", "fast", "--out", at("discover"), "-q"},
		{"report", at("discover")},
		{"probe", "rtt", "--platform", "zhu-2racks", "--ranks", "0-3", "--out", at("dataset.json"), "-q"},
		{"probe", "identity", "--platform", "zhu-2racks", "--out", at("identities.json")},
		{"cluster", filepath.Join(at("discover"), "dataset.json"), "--distance", "rtt", "--algorithm", "agglomerative", "--out", at("cluster.json")},
		{"infer", "--platform", "zhu-2racks", "--out", at("infer.json"), "-q"},
		{"platform", "export", "--simgrid", "zhu-2racks", "-o", at("zhu.xml")},
		{"topo", "convert", in, "--to", "json", "-o", at("topology.json")},
		{"topo", "convert", in, "--to", "dot", "-o", at("topology.dot")},
		{"order", in, "--format", "ompi-rankfile", "-o", at("rankfile")},
		{"order", in, "--out-dir", at("order")},
		{"bench", "bcast", "--platform", tinyPlatform, "--sizes", "1KiB", "--reps", "1", "--algorithms", "binomial", "--plot", at("bench.png"), "-q"},
		{"tune", "bcast", "--platform", tinyPlatform, "--out", at("tune"), "--sizes", "1KiB", "--reps", "1", "--algorithms", "binomial,pipeline", "--segs", "8KiB", "-q"},
		{"version", "--cpuprofile", at("cpu.prof"), "--memprofile", at("mem.prof")},
	} {
		if args[0] == "report" {
			// discover wrote one already: report must write it again.
			if err := os.Remove(filepath.Join(args[1], "report.html")); err != nil {
				t.Fatal(err)
			}
		}
		before := countFiles(t, dir, false)
		if _, stderr, code := runCLI(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if countFiles(t, dir, false) == before {
			t.Errorf("%v wrote no file", args)
		}
	}
	countFiles(t, dir, true)
}

// countFiles counts the files below dir; with check, it fails the test for
// every one whose mode is not 0644.
func countFiles(t *testing.T, dir string, check bool) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if info, err := d.Info(); check && (err != nil || info.Mode().Perm() != 0o644) {
			t.Errorf("%s: mode %v (%v), want 0644", path, info.Mode().Perm(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWarnImplausibleListsAndBounds: implausible values go to stderr, ten
// at most, then a line saying where all of them are marked.
func TestWarnImplausibleListsAndBounds(t *testing.T) {
	ds := &dataset.Dataset{World: dataset.World{Kind: "local", Size: 13}, PLogP: &dataset.PLogPSection{}}
	for b := 1; b <= 12; b++ {
		ds.PLogP.Pairs = append(ds.PLogP.Pairs, dataset.PairResult[dataset.PLogPResult]{A: 0, B: b,
			Result: dataset.PLogPResult{LS: -2.719e-6, G0S: 1e-6, Sizes: []dataset.PLogPSize{{RTT: dataset.Summary{Mean: 1e-5, Min: 1e-5}, GS: 1e-6}}}})
	}
	var buf bytes.Buffer
	warnImplausible(&buf, ds, "d.json")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 11 || lines[0] != "netaware: warning: implausible measurement: plogp 0->1: L = -2.719e-06 s < 0" ||
		lines[10] != `netaware: warning: 2 more implausible values; every one is listed under "warnings" in d.json` {
		t.Errorf("stderr:\n%s", buf.String())
	}
	if w := ds.PLogP.Pairs[11].Warnings; len(w) != 1 {
		t.Errorf("pair 0->12 not marked: %q", w)
	}
}
