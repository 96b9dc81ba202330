package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netaware/longhaul"
	"netaware/platform"
)

// windowPlatform writes grid5000-4sites with a TCP window bound.
func windowPlatform(t *testing.T, window string) string {
	t.Helper()
	src, err := platform.Source("grid5000-4sites")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "tcp: {crosstraffic: 0.05}", "tcp: {crosstraffic: 0.05, window_bytes: "+window+"}", 1)
	if s == string(src) {
		t.Fatal("grid5000-4sites has no tcp line to extend")
	}
	path := filepath.Join(t.TempDir(), "g5k-window.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The long-haul acceptance, smaller (8 MiB): Bordeaux to Toulouse
// with 128 KiB windows, 1, 2 and 3 helpers per side: each faster than the
// last, and Eq. 3.2's pick within 10% of the best measured.
func TestLonghaulCommandGrid5000(t *testing.T) {
	plat := windowPlatform(t, "128KiB")
	stdout, stderr, code := runCLI(t, "longhaul", "--platform", plat, "--src", "0", "--dst", "32", "--size", "8MiB", "--helpers", "1,2,3", "--reps", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep longhaul.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(rep.Rows) != 4 {
		t.Fatalf("rows %+v", rep.Rows)
	}
	for i := 1; i < len(rep.Rows); i++ {
		if rep.Rows[i].Seconds >= rep.Rows[i-1].Seconds {
			t.Errorf("%d helpers (%v s) not faster than %d (%v s)", rep.Rows[i].HelpersPerSide, rep.Rows[i].Seconds, rep.Rows[i-1].HelpersPerSide, rep.Rows[i-1].Seconds)
		}
	}
	if rep.ChosenLoss > 0.1 {
		t.Errorf("Eq. 3.2 picks %d, %.1f%% slower than the best (%d)", rep.Chosen, 100*rep.ChosenLoss, rep.Best)
	}
	for _, bad := range [][]string{
		{"longhaul", "--platform", plat, "--helpers", "x"},
		{"longhaul", "--platform", plat, "--size", "0"},
		{"longhaul", "--platform", plat, "--reps", "0"},
		{"advise"},
		{"advise", "--platform", "grid5000-4sites", "--sync-share", "2"},
		{"advise", "--dataset", "d.json"},
	} {
		if _, _, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if _, stderr, code := runCLI(t, "longhaul", "--platform", plat, "--helpers", "40"); code != 1 || !strings.Contains(stderr, "40 helpers per side need 82 ranks") {
		t.Errorf("40 helpers: exit %d, %s", code, stderr)
	}
}

func TestAdviseCommand(t *testing.T) {
	stdout, stderr, code := runCLI(t, "advise", "--platform", "grid5000-4sites", "--window", "128KiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"bordeaux-01.. - toulouse-01..  1Gbps      18.1ms  2.26MB",
		"18 (9 helpers/side at 128KiB)",
		"--mca btl_tcp_sndbuf 0",
		"MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE=8388608",
		`net.ipv4.tcp_rmem="4096 131072 6291456"`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = runCLI(t, "advise", "--platform", "grid5000-4sites", "--json")
	var out adviseOutput
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil || len(out.Paths) != 10 || out.Window != 4<<20 {
		t.Errorf("json: exit %d, %v, %+v", code, err, out)
	}
}
