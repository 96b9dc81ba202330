package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// slowDocExamples are documented commands that take 10-60 s each on the
// loaded machine; they run with the other examples (NETAWARE_EXAMPLES=1).
var slowDocExamples = []string{"netaware infer --platform dichev-n1"}

// TestClusterDocsExamples runs every example of 'netaware cluster --help'
// and every command of the code blocks of docs/clustering.md,
// docs/inference.md and docs/longhaul.md (each page's blocks in order, in
// one directory), each
// within the 2 minutes the help promises. About 40 s on two busy cores;
// the slowDocExamples (and what reads their output) only with
// NETAWARE_EXAMPLES=1.
func TestClusterDocsExamples(t *testing.T) {
	bin := buildNetaware(t)
	run := func(t *testing.T, lines []string) {
		dir := t.TempDir()
		n := 0
		slowOut := map[string]bool{} // files the skipped slow examples write
		for _, l := range lines {
			slow := false
			for _, s := range slowDocExamples {
				slow = slow || strings.HasPrefix(l, s)
			}
			f := strings.Fields(l)
			for i, w := range f {
				if slowOut[w] && i > 0 {
					slow = true
				}
			}
			if slow && os.Getenv("NETAWARE_EXAMPLES") == "" {
				for i, w := range f {
					if w == "--out" && i+1 < len(f) {
						slowOut[f[i+1]] = true
					}
				}
				t.Logf("skip %s: slow (NETAWARE_EXAMPLES=1 runs it)", l)
				continue
			}
			if why := skipReason(l); why != "" {
				t.Logf("skip %s: %s", l, why)
				continue
			}
			runExample(t, bin, dir, example{line: l})
			n++
		}
		if n == 0 {
			t.Error("no example ran")
		}
	}
	t.Run("cluster --help", func(t *testing.T) {
		c, _, err := newRootCmd().Find([]string{"cluster"})
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, e := range helpExamples(c) {
			lines = append(lines, e.line)
		}
		if len(lines) < 5 {
			t.Fatalf("%d examples", len(lines))
		}
		run(t, lines)
	})
	for _, page := range []string{"clustering.md", "inference.md", "longhaul.md"} {
		t.Run(page, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, e := range docExamples(string(b)) {
				lines = append(lines, e.line)
			}
			run(t, lines)
		})
	}
}

// The help's printf example writes lat.csv through sh, so its escapes
// must survive Go's string and the shell: the file has the 5 lines shown.
func TestClusterHelpCSVExampleWritesMatrix(t *testing.T) {
	c, _, err := newRootCmd().Find([]string{"cluster"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range helpExamples(c) {
		if !strings.HasPrefix(e.line, "printf ") {
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command("sh", "-c", e.line)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", e.line, err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "lat.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(b), "\n"); got != 5 {
			t.Errorf("lat.csv has %d lines:\n%s", got, b)
		}
		return
	}
	t.Error("no printf example in cluster --help")
}
