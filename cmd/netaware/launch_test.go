package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/comm/pingpong"
	"netaware/launch"
)

// built is this command compiled once for all the tests that start
// processes (each build costs seconds); TestMain removes it.
var built struct {
	once sync.Once
	dir  string
	out  []byte
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// netawareBinary returns the path of this command, built on first use.
func netawareBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "netaware-test-bin"); built.err != nil {
			return
		}
		built.out, built.err = exec.Command("go", "build", "-o", filepath.Join(built.dir, "netaware"), ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return filepath.Join(built.dir, "netaware")
}

// buildNetaware returns the built command, so that tests can start real
// rank processes; skipped with -short.
func buildNetaware(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	return netawareBinary(t)
}

// cleanEnv is the test's environment without any launcher's variables, so
// that a test run under mpirun or srun does not confuse the ranks.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "NETAWARE_") || strings.HasPrefix(k, "OMPI_") || strings.HasPrefix(k, "PMI") || strings.HasPrefix(k, "SLURM_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func checkPingpongJSON(t *testing.T, out []byte, ranks int) {
	t.Helper()
	var rep pingpong.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("rank 0's output is not the JSON report: %v\n%s", err, out)
	}
	if rep.World != "tcp" || rep.Ranks != ranks || len(rep.Latency) != 2 || len(rep.Streaming) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	for _, l := range rep.Latency {
		if l.NetawareS <= 0 || l.RawS <= 0 || l.LatencyRatio <= 0 {
			t.Errorf("latency row without measurements: %+v", l)
		}
	}
	if s := rep.Streaming[0]; s.Netaware <= 0 || s.Raw <= 0 || s.Ratio <= 0 {
		t.Errorf("streaming row without measurements: %+v", s)
	}
}

var quickPingpong = []string{"bench", "pingpong", "--json", "--iters", "50", "--rounds", "1", "--sizes", "1,1KiB", "--stream-size", "64KiB", "--stream-count", "5"}

// TestTCPWorld builds the binary once and runs real ranks with it.
func TestTCPWorld(t *testing.T) {
	bin := buildNetaware(t)
	t.Run("Launch8RanksBenchPingpong", func(t *testing.T) { launch8RanksBenchPingpong(t, bin) })
	t.Run("LaunchReportsFailedRank", func(t *testing.T) { launchReportsFailedRank(t, bin) })
	t.Run("MpirunLikeEnvironment", func(t *testing.T) { mpirunLikeEnvironment(t, bin) })
}

func launch8RanksBenchPingpong(t *testing.T, bin string) {
	cmd := exec.Command(bin, append([]string{"launch", "-n", "8", "--", "netaware"}, quickPingpong...)...)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("launch: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	// Only rank 0 prints, and under --json its output passes untouched:
	// what 'launch ... --json | jq' reads.
	checkPingpongJSON(t, stdout.Bytes(), 8)
	// --prefix always brings the prefixes back.
	cmd = exec.Command(bin, append([]string{"launch", "-n", "2", "--prefix", "always", "--", "netaware"}, quickPingpong...)...)
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("launch --prefix always: %v", err)
	}
	var js bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		rest, ok := strings.CutPrefix(line, "[0] ")
		if !ok {
			t.Fatalf("--prefix always: line not from rank 0 or without prefix: %q", line)
		}
		js.WriteString(rest + "\n")
	}
	checkPingpongJSON(t, js.Bytes(), 2)
}

func launchReportsFailedRank(t *testing.T, bin string) {
	// A world of 1 rank cannot ping-pong: every rank fails, and so launch.
	cmd := exec.Command(bin, "launch", "-n", "1", "--", "netaware", "bench", "pingpong")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailure {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "launch: rank 0 failed: exit status 1") || !strings.Contains(string(out), "netaware: rank 0 of 1: pingpong needs at least 2 ranks") {
		t.Errorf("output does not name the failed rank:\n%s", out)
	}
}

// startLikeMpirun starts n processes of bin with args the way mpirun would
// (Open MPI's rank variables, plus the coordinator and token passed with
// -x), waits for them (killing them after timeout) and returns each rank's
// output; a rank that fails fails the test.
func startLikeMpirun(t *testing.T, bin string, n int, timeout time.Duration, args ...string) []*bytes.Buffer {
	t.Helper()
	coord, err := launch.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for r := 0; r < n; r++ {
		cmds[r] = exec.Command(bin, args...)
		cmds[r].Env = append(cleanEnv(),
			fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", r), fmt.Sprintf("OMPI_COMM_WORLD_SIZE=%d", n),
			"NETAWARE_COORDINATOR="+coord, "NETAWARE_TOKEN=mpirun-secret")
		outs[r] = &bytes.Buffer{}
		cmds[r].Stdout = outs[r]
		cmds[r].Stderr = outs[r]
		if err := cmds[r].Start(); err != nil {
			t.Fatal(err)
		}
	}
	timer := time.AfterFunc(timeout, func() {
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
	return outs
}

// mpirunLikeEnvironment runs the ping-pong benchmark on ranks started the
// way mpirun starts them.
func mpirunLikeEnvironment(t *testing.T, bin string) {
	const n = 3
	outs := startLikeMpirun(t, bin, n, 60*time.Second, quickPingpong...)
	if t.Failed() {
		return
	}
	checkPingpongJSON(t, outs[0].Bytes(), n)
	for r := 1; r < n; r++ {
		if outs[r].Len() != 0 {
			t.Errorf("rank %d printed %q", r, outs[r])
		}
	}
}
