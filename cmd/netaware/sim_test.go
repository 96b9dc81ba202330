package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func runSimCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// A ring of 1 MB rendezvous messages on zhu-2racks without noise: 30
// messages, one flow each; every transfer crosses two NICs (1 Gbps), the
// slowest route (inter-rack: 225 us) sets the time: 3 latencies (RTS, CTS,
// data) + 1e6 B / 125 MB/s, with crosstraffic 1.05 on each NIC direction.
func TestSimStatsRing(t *testing.T) {
	out, err := runSimCLI(t, "sim", "stats", "--platform", "zhu-2racks", "--pattern", "ring", "--bytes", "1000000", "--no-noise", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st simStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if st.Ranks != 30 || st.Messages != 30 || st.Flows != 30 {
		t.Errorf("ranks %d messages %d flows %d, want 30 each", st.Ranks, st.Messages, st.Flows)
	}
	want := 3*225e-6 + 1e6/(125e6/1.05)
	if math.Abs(st.VirtualS-want) > 1e-6 {
		t.Errorf("virtual time %.9f s, want %.9f", st.VirtualS, want)
	}
}

func TestSimStatsBadInputIsUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "stats"},
		{"sim", "stats", "--platform", "zhu-2racks", "--pattern", "nope"},
		{"sim", "stats", "--platform", "zhu-2racks", "--bytes", "lots"},
		{"sim", "stats", "--platform", "zhu-2racks", "--weighting", "fair"},
	} {
		_, err := runSimCLI(t, args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}
