package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netaware/topo"
)

func runPlatformCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func TestPlatformListAndShow(t *testing.T) {
	out, _, err := runPlatformCLI(t, "platform", "list")
	if err != nil || !strings.Contains(out, "zhu-2racks") || strings.Count(out, "\n") != 8 {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, _, err = runPlatformCLI(t, "platform", "show", "zhu-2racks")
	for _, want := range []string{"30 hosts, 2 switches, 1 switch links, 30 ranks", "rackA - rackB  10Gbps  5us", "median 225us", "switch  2       2x15"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("show lacks %q (err %v)\n%s", want, err, out)
		}
	}
	out, _, err = runPlatformCLI(t, "platform", "show", "zhu-2racks", "--source")
	if err != nil || !strings.HasPrefix(out, "# zhu-2racks") {
		t.Errorf("show --source: %v %.80s", err, out)
	}
	if _, _, err = runPlatformCLI(t, "platform", "show", "zhu-2racks", "--per-host", "zero"); !isPlatformUsage(err) {
		t.Errorf("bad --per-host: %v", err)
	}
}

func isPlatformUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}

func TestPlatformValidateNamesLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "grid.yaml")
	os.WriteFile(bad, []byte("version: 1\nswitches: [s]\nhosts:\n  - {names: \"h[1-2]\", switch: s, link: {bandwidth: 10Gbs, latency: 1us}}\n"), 0o644)
	_, errOut, err := runPlatformCLI(t, "platform", "validate", bad, "../../platform/testdata/example.yaml")
	if err == nil || isPlatformUsage(err) {
		t.Errorf("invalid file: err %v", err)
	}
	if want := bad + `:4: hosts[0].link.bandwidth: "10Gbs": unknown unit`; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q lacks %q", errOut, want)
	}
}

func TestPlatformTruthJSONIsTopology(t *testing.T) {
	out, _, err := runPlatformCLI(t, "platform", "truth", "zhu-2racks", "--per-host", "cores", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var tp topo.Topology
	if err := json.Unmarshal([]byte(out), &tp); err != nil {
		t.Fatal(err)
	}
	if tp.Size != 360 || len(tp.Ranks) != 360 || len(tp.Levels) != 4 || tp.Levels[0].Name != "socket" || len(tp.Levels[0].Groups) != 60 {
		t.Errorf("size %d ranks %d levels %+v", tp.Size, len(tp.Ranks), len(tp.Levels))
	}
	if r := tp.Ranks[6]; r.Host != "a00" || *r.Socket != 1 || *r.Core != 6 {
		t.Errorf("rank 6 = %+v", r)
	}
}

func TestPlatformExportSimGrid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zhu.xml")
	if _, _, err := runPlatformCLI(t, "platform", "export", "--simgrid", "zhu-2racks", "-o", path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	// 30 hosts on 2 switches: a route per host link and one for the link
	// between the switches.
	if err != nil || !bytes.Contains(data, []byte(`<platform version="4.1">`)) || bytes.Count(data, []byte("<route ")) != 30+1 {
		t.Errorf("export: %v, %d bytes, %d routes", err, len(data), bytes.Count(data, []byte("<route ")))
	}
	if _, _, err := runPlatformCLI(t, "platform", "export", "--simgrid", "--full-routes", "zhu-2racks", "-o", path); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(path)
	if err != nil || bytes.Count(data, []byte("<route ")) != 30*29/2 {
		t.Errorf("export --full-routes: %v, %d routes, want one per host pair", err, bytes.Count(data, []byte("<route ")))
	}
	if _, _, err := runPlatformCLI(t, "platform", "export", "zhu-2racks"); !isPlatformUsage(err) {
		t.Errorf("export without a format: %v", err)
	}
}
