package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netaware/launch"
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
		if !strings.Contains(string(out), "[0] 4 ranks over TCP") {
			t.Errorf("summary missing:\n%s", out)
		}
		checkDiscoverDir(t, dir, 4)
	})
	t.Run("MpirunLikeEnvironment", func(t *testing.T) {
		const n = 3
		dir := t.TempDir()
		coord, err := launch.FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		cmds := make([]*exec.Cmd, n)
		outs := make([]*bytes.Buffer, n)
		for r := 0; r < n; r++ {
			cmds[r] = exec.Command(bin, "discover", "--level", "standard", "--out", dir)
			cmds[r].Env = append(cleanEnv(),
				fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", r), fmt.Sprintf("OMPI_COMM_WORLD_SIZE=%d", n),
				"NETAWARE_COORDINATOR="+coord, "NETAWARE_TOKEN=mpirun-secret")
			outs[r] = &bytes.Buffer{}
			cmds[r].Stdout, cmds[r].Stderr = outs[r], outs[r]
			if err := cmds[r].Start(); err != nil {
				t.Fatal(err)
			}
		}
		timer := time.AfterFunc(120*time.Second, func() {
			for _, c := range cmds {
				c.Process.Kill()
			}
		})
		defer timer.Stop()
		for r, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Errorf("rank %d: %v\n%s", r, err, outs[r])
			}
		}
		if t.Failed() {
			return
		}
		checkDiscoverDir(t, dir, n)
		if strings.Contains(outs[0].String(), "built-in simulated platform") {
			t.Errorf("rank 0 fell back to the simulator:\n%s", outs[0])
		}
	})
}
