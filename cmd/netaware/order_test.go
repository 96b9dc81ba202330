package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"netaware/order"
)

// On two switches whose hosts are listed cyclically (a1 b1 a2 b2 ...),
// discover's order.hostfile and 'netaware order' list the four a-hosts
// (rank 0's switch) before the four b-hosts, so that a ring in rank order
// crosses the trunk twice instead of eight times.
func TestOrderCyclicTwoSwitches(t *testing.T) {
	dir := t.TempDir()
	if _, err := runTopoCLI(t, "discover", "--platform", "testdata/order-2switches-cyclic.yaml", "--level", "fast", "--out", dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "order.hostfile"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) != 8 || lines[0] != "a1" {
		t.Fatalf("order.hostfile: %q, want 8 hosts starting with a1", lines)
	}
	first, second := slices.Sorted(slices.Values(lines[:4])), slices.Sorted(slices.Values(lines[4:]))
	if !slices.Equal(first, []string{"a1", "a2", "a3", "a4"}) || !slices.Equal(second, []string{"b1", "b2", "b3", "b4"}) {
		t.Fatalf("order.hostfile %q: want the a-hosts, then the b-hosts", lines)
	}
	topology := filepath.Join(dir, "topology.json")
	out, err := runTopoCLI(t, "order", topology, "--format", "slurm-hostfile")
	if err != nil || out != string(data) {
		t.Errorf("order --format slurm-hostfile = %q (%v), want discover's %q", out, err, data)
	}
	out, err = runTopoCLI(t, "order", topology, "--format", "machinefile")
	if err != nil || out != strings.Join(lines, ":1\n")+":1\n" {
		t.Errorf("machinefile %q (%v)", out, err)
	}
	out, err = runTopoCLI(t, "order", topology, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Slots []order.Slot `json:"slots"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Slots) != 8 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	for k, s := range doc.Slots {
		// One rank per host, ranks numbered in host order a1 b1 a2 ...: the
		// measured rank of host aN is 2(N-1), of bN 2N-1.
		n := int(s.Host[1] - '0')
		want := 2*(n-1) + map[byte]int{'a': 0, 'b': 1}[s.Host[0]]
		if s.Rank != k || s.Host != lines[k] || s.Slot != 0 || s.Measured != want {
			t.Errorf("slot %d: %+v, want rank %d on %s, measured rank %d", k, s, k, lines[k], want)
		}
	}
	launch := filepath.Join(dir, "launch")
	if _, err := runTopoCLI(t, "order", topology, "--out-dir", launch); err != nil {
		t.Fatal(err)
	}
	for _, f := range order.Formats {
		if _, err := os.Stat(filepath.Join(launch, order.FileName(f))); err != nil {
			t.Errorf("--out-dir: %v", err)
		}
	}
}

func TestOrderUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"order"},
		{"order", exampleTopology, "--format", "rankfile"},
		{"order", exampleTopology, "--format", "hosts", "--out-dir", "x"},
		{"order", exampleTopology, "-o", "x"},
		{"order", exampleTopology, "--json", "--format", "hosts"},
	} {
		if _, err := runTopoCLI(t, args...); !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, err := runTopoCLI(t, "order", "no-such.json"); err == nil || isUsage(err) {
		t.Errorf("missing file: %v, want a failure that is not a usage error", err)
	}
}
