package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netaware/dataset"
	"netaware/topo"
)

// checkDiscoverDir checks that a discovery of n ranks wrote its files and a
// valid topology.
func checkDiscoverDir(t *testing.T, dir string, n int) {
	t.Helper()
	for _, f := range []string{"dataset.json", "topology.json", "topology.dot", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	tp, err := topo.ReadFile(filepath.Join(dir, "topology.json"))
	if err != nil {
		t.Fatalf("topology.json: %v", err)
	}
	if tp.Size != n {
		t.Errorf("topology of %d ranks, want %d", tp.Size, n)
	}
}

// TestDiscoverOverTCP runs the main job on real processes: started by
// netaware launch, and started the way mpirun starts them.
func TestDiscoverOverTCP(t *testing.T) {
	bin := buildNetaware(t)
	t.Run("Launch", func(t *testing.T) {
		dir := t.TempDir()
		cmd := exec.Command(bin, "launch", "-n", "4", "--", "netaware", "discover", "--blind", "--level", "fast", "--out", dir)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("launch discover: %v\n%s", err, out)
		}
		// Only rank 0 prints: no rank prefix.
		if !strings.Contains(string(out), "\n4 ranks over TCP") || strings.Contains(string(out), "[0] ") {
			t.Errorf("summary missing:\n%s", out)
		}
		checkDiscoverDir(t, dir, 4)
	})
	t.Run("MpirunLikeEnvironment", func(t *testing.T) {
		const n = 3
		dir := t.TempDir()
		outs := startLikeMpirun(t, bin, n, 120*time.Second, "discover", "--level", "standard", "--out", dir)
		if t.Failed() {
			return
		}
		checkDiscoverDir(t, dir, n)
		if strings.Contains(outs[0].String(), "built-in simulated platform") {
			t.Errorf("rank 0 fell back to the simulator:\n%s", outs[0])
		}
	})
}

// TestDiscoverResumeCLI: --resume keeps every PLogP pair of --out's
// dataset (here a finished one: nothing is left to measure), says so, and
// refuses a missing dataset or one of another world.
func TestDiscoverResumeCLI(t *testing.T) {
	const plat = "../../discover/testdata/fram-4nodes.yaml"
	dir := t.TempDir()
	if _, err := runSimCLI(t, "discover", "--platform", plat, "--blind", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	before, err := dataset.Load(filepath.Join(dir, "dataset.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runSimCLI(t, "discover", "--platform", plat, "--blind", "--out", dir, "-q", "--resume")
	if err != nil {
		t.Fatal(err)
	}
	n := len(before.PLogP.Pairs)
	if want := fmt.Sprintf("resumed: %d PLogP pairs kept from %s, 0 measured now", n, filepath.Join(dir, "dataset.json")); !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	after, err := dataset.Load(filepath.Join(dir, "dataset.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(before.PLogP.Pairs)
	b, _ := json.Marshal(after.PLogP.Pairs)
	if string(a) != string(b) {
		t.Error("the kept PLogP pairs changed")
	}
	if _, err := runSimCLI(t, "discover", "--platform", plat, "--blind", "--out", t.TempDir(), "-q", "--resume"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("--resume without a dataset: %v", err)
	}
	if _, err := runSimCLI(t, "discover", "--platform", "zhu-2racks", "--out", dir, "-q", "--resume"); err == nil || !strings.Contains(err.Error(), "another world") {
		t.Errorf("--resume on another world: %v", err)
	}
}
