package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"netaware/dataset"
	"netaware/tune"
)

// syncBuffer is a bytes.Buffer a child process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// interrupt starts bin with args, waits until ready reports true (polled),
// sends sig, and returns the exit code, the time from the signal to the
// exit, and the output.
func interrupt(t *testing.T, bin string, sig syscall.Signal, ready func(stderr *syncBuffer) bool, args ...string) (code int, took time.Duration, stdout, stderr string) {
	t.Helper()
	var out, errOut syncBuffer
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.After(60 * time.Second)
	for !ready(&errOut) {
		select {
		case err := <-done:
			t.Fatalf("%v ended before the signal: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errOut.String())
		case <-deadline:
			t.Fatalf("%v not ready after 60 s\nstderr:\n%s", args, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	start := time.Now()
	cmd.Process.Signal(sig)
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%v still running 10 s after %v", args, sig)
	}
	took = time.Since(start)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, took, out.String(), errOut.String()
}

// TestInterruptStopsAndKeeps: SIGINT stops 'tune bcast' (which once ignored
// it for 20 s and exited 0) within 2 s with exit code 130 and keeps the
// algorithms it finished; SIGTERM stops a probe campaign with 143 and
// leaves its checkpointed dataset, which --resume continues.
func TestInterruptStopsAndKeeps(t *testing.T) {
	bin := buildNetaware(t)
	t.Run("TuneBcastSIGINT", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "tuned")
		// The progress bar names the first algorithm once it has finished:
		// the baseline, ompi-fixed.
		code, took, stdout, stderr := interrupt(t, bin, syscall.SIGINT,
			func(e *syncBuffer) bool { return strings.Contains(e.String(), "ompi-fixed") },
			"tune", "bcast", "--platform", "zhu-2racks", "--out", dir)
		if code != 130 || took > 2*time.Second {
			t.Fatalf("exit %d %v after SIGINT, want 130 within 2 s\nstdout:\n%s\nstderr:\n%s", code, took, stdout, stderr)
		}
		if !strings.Contains(stderr, "interrupted by SIGINT") || strings.Contains(stderr, "did not stop") {
			t.Errorf("stderr does not say it stopped on SIGINT by itself:\n%s", stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "bench.partial.json"))
		if err != nil {
			t.Fatalf("nothing kept: %v\nstdout:\n%s", err, stdout)
		}
		var rep tune.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Measurements) < 1 || rep.Measurements[0].Algorithm.Name != tune.Baseline.Name || len(rep.Choices) != 0 {
			t.Errorf("bench.partial.json: %d measurements (first %+v), %d choices; want the baseline first and no choice",
				len(rep.Measurements), rep.Measurements[0].Algorithm, len(rep.Choices))
		}
		if _, err := os.Stat(filepath.Join(dir, "decision.json")); err == nil {
			t.Error("an interrupted tune wrote a decision")
		}
	})
	t.Run("DiscoverSIGINT", func(t *testing.T) {
		// Interrupted in its PLogP phase (all pairs at --level thorough:
		// hours, so the signal always lands in it), discover leaves the
		// measurements of its last checkpoint (every 5 s) in OUT/dataset.json.
		dir := filepath.Join(t.TempDir(), "out")
		ds := filepath.Join(dir, "dataset.json")
		code, took, stdout, stderr := interrupt(t, bin, syscall.SIGINT,
			func(*syncBuffer) bool { _, err := os.Stat(ds); return err == nil },
			"discover", "--platform", "fram-like", "--blind", "--level", "thorough", "--out", dir)
		if code != 130 || took > 2*time.Second {
			t.Fatalf("exit %d %v after SIGINT, want 130 within 2 s\nstdout:\n%s\nstderr:\n%s", code, took, stdout, stderr)
		}
		if !strings.Contains(stderr, "interrupted: the measurements finished so far are in "+ds) {
			t.Errorf("stderr does not say what was kept:\n%s", stderr)
		}
		d, err := dataset.Load(ds)
		if err != nil {
			t.Fatal(err)
		}
		if d.World.Kind != "sim" || d.World.Platform != "fram-like" || d.RTT == nil || len(d.RTT.Pairs) == 0 ||
			d.PLogP == nil || len(d.PLogP.Pairs) == 0 || d.PLogP.Complete {
			t.Errorf("kept dataset: world %+v, rtt %v, plogp %v", d.World, d.RTT != nil, d.PLogP != nil)
		}
	})
	t.Run("ProbeSIGTERM", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "d.json")
		args := []string{"probe", "plogp", "--platform", "zhu-2racks", "--ranks", "0-15", "--max-size", "4KiB", "--out", out, "--checkpoint", "1ms", "-q"}
		code, took, stdout, stderr := interrupt(t, bin, syscall.SIGTERM,
			func(*syncBuffer) bool { _, err := os.Stat(out); return err == nil }, args...)
		if code != 143 || took > 2*time.Second {
			t.Fatalf("exit %d %v after SIGTERM, want 143 within 2 s\nstdout:\n%s\nstderr:\n%s", code, took, stdout, stderr)
		}
		ds, err := dataset.Load(out)
		if err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		if n := len(ds.PLogP.Pairs); n < 1 || n >= 120 {
			t.Errorf("checkpoint holds %d of 120 pairs", n)
		}
	})
}
