package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSimRunRunsACommandOnThePlatform: 'sim run --platform P -- CMD' is CMD
// with --platform P: every rank of the platform answers.
func TestSimRunRunsACommandOnThePlatform(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"sim", "run", "--platform", "zhu-2racks", "--", "probe", "identity"})
	root.SetOut(&out)
	root.SetErr(&out)
	if err := root.Execute(); err != nil {
		t.Fatalf("sim run: %v\n%s", err, out.String())
	}
	for _, host := range []string{"a00", "a14", "b00", "b14"} {
		if !strings.Contains(out.String(), host) {
			t.Errorf("output lacks host %s:\n%s", host, out.String())
		}
	}
	if _, _, code := runCLI(t, "sim", "run", "--", "probe", "identity"); code != exitUsage {
		t.Errorf("sim run without --platform exited %d, want %d", code, exitUsage)
	}
}
