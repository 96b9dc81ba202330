package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"netaware/emu"
)

// The emu CLI tests build clusters under the prefix ne4.

// emuTwoByTwo is the emu package's test cluster.
const emuTwoByTwo = "../../emu/testdata/test-2x2.yaml"

func TestEmuCommandLineErrors(t *testing.T) {
	bin := buildNetaware(t)
	for _, args := range [][]string{
		{"emu", "up", "zhu-2racks", "--prefix", "Bad-1"},
		{"emu", "run", "ne4", "hostname"},
		{"emu", "down"},
		{"emu", "down", "ne4", "--all"},
	} {
		cmd := exec.Command(bin, args...)
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitUsage {
			t.Errorf("%v: %v, want exit code 2\n%s", args, err, out)
		}
	}
	if os.Geteuid() == 0 {
		if setpriv, err := exec.LookPath("setpriv"); err == nil {
			out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "emu", "up", "zhu-2racks", "--prefix", "ne4").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "needs root") {
				t.Errorf("emu up as nobody: %v\n%s\nwant an error saying root is needed", err, out)
			}
		}
	}
}

func TestEmuUpRunDiscoverDown(t *testing.T) {
	if err := emu.Check(); err != nil {
		t.Skipf("emulated cluster unavailable: %v", err)
	}
	bin := buildNetaware(t)
	dir := t.TempDir()
	plat, err := filepath.Abs(emuTwoByTwo)
	if err != nil {
		t.Fatal(err)
	}
	nw := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command("timeout", append([]string{"90", bin}, args...)...)
		cmd.Env = cleanEnv()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			t.Logf("netaware %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), err
	}
	nw("emu", "down", "ne4")
	t.Cleanup(func() { nw("emu", "down", "ne4") })
	out, err := nw("emu", "up", plat, "--prefix", "ne4")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "cluster ne4 up") || !strings.Contains(out, "b1") {
		t.Errorf("summary:\n%s", out)
	}

	out, err = nw("emu", "status", "ne4", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		State string
		Hosts []struct{ Name, Address string }
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.State != "up" || len(st.Hosts) != 4 || st.Hosts[3].Name != "b1" {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if out, err := nw("emu", "run", "ne4", "--host", st.Hosts[3].Address, "--", "hostname"); err != nil || out != "b1\n" {
		t.Errorf("hostname on b1's address printed %q (%v)", out, err)
	}

	disc := filepath.Join(dir, "out")
	out, err = nw("emu", "run", "ne4", "--timeout", "60s", "--", "netaware", "discover", "--level", "fast", "--out", disc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "pairs measured") || strings.Contains(out, "[0] ") {
		t.Errorf("only rank 0 prints, so without a prefix; got:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(disc, "topology.json"))
	if err != nil {
		t.Fatal(err)
	}
	var topo struct {
		Ranks  []json.RawMessage `json:"ranks"`
		Levels []struct {
			Name   string  `json:"name"`
			Groups [][]int `json:"groups"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(b, &topo); err != nil || len(topo.Ranks) != 4 || len(topo.Levels) == 0 {
		t.Fatalf("topology.json: %v\n%s", err, b)
	}
	for _, l := range topo.Levels {
		if l.Name == "host" && len(l.Groups) != 4 {
			t.Errorf("host level %v: the four hosts have four host names", l.Groups)
		}
	}

	// Open MPI across the namespaces, through the rsh agent.
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Log("no mpirun: Open MPI through emu rsh-agent not tested")
	} else {
		hosts, err := nw("emu", "status", "ne4", "--mpi-hosts")
		if err != nil {
			t.Fatal(err)
		}
		out, err := nw("emu", "run", "ne4", "--host", "a0", "--timeout", "60s", "--",
			"mpirun", "--allow-run-as-root", "--leave-session-attached", "-n", "4", "--host", strings.TrimSpace(hosts),
			"--mca", "plm_rsh_agent", bin+" emu rsh-agent", "--mca", "plm_rsh_no_tree_spawn", "1",
			"--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0",
			"--mca", "pml", "ob1", "hostname")
		lines := strings.Fields(out)
		slices.Sort(lines)
		if err != nil || !slices.Equal(lines, []string{"a0", "a1", "b0", "b1"}) {
			t.Errorf("mpirun hostname on hosts %s printed %q (%v), want a0 a1 b0 b1", hosts, out, err)
		}
	}

	// SIGTERM to run stops every rank within 2 s.
	run := exec.Command(bin, "emu", "run", "ne4", "--", "sleep", "60")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	pids := emuWaitPids(t, "ne4-h3")
	start := time.Now()
	run.Process.Signal(syscall.SIGTERM)
	err = run.Wait()
	if d := time.Since(start); err == nil || d > 2500*time.Millisecond {
		t.Errorf("emu run after SIGTERM: %v after %v, want a failure within 2 s", err, d)
	}
	emuAssertDead(t, pids)

	// A run killed with -9 leaves its ranks behind; down removes them.
	run = exec.Command(bin, "emu", "run", "ne4", "--", "sleep", "60")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	pids = emuWaitPids(t, "ne4-h3")
	run.Process.Signal(syscall.SIGKILL)
	run.Wait()
	if _, err := nw("emu", "down", "ne4"); err != nil {
		t.Fatal(err)
	}
	emuAssertDead(t, pids)
	if b, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(b), "ne4-") {
		t.Errorf("namespaces left after down:\n%s", b)
	}
	if out, _ := nw("emu", "status"); strings.Contains(out, "ne4") {
		t.Errorf("status still lists ne4:\n%s", out)
	}
}

// emuWaitPids waits until namespace ns runs a process and returns the pids.
func emuWaitPids(t *testing.T, ns string) []int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := exec.Command("ip", "netns", "pids", ns).Output()
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		if len(pids) > 0 {
			return pids
		}
	}
	t.Fatalf("nothing started in namespace %s", ns)
	return nil
}

// emuAssertDead checks that the processes are gone (or zombies waiting for
// init to reap them).
func emuAssertDead(t *testing.T, pids []int) {
	t.Helper()
	for _, p := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if i := bytes.LastIndexByte(b, ')'); err == nil && i >= 0 && i+2 < len(b) && b[i+2] != 'Z' {
			t.Errorf("rank process %d survived: %s", p, b)
		}
	}
}
