package coll

import (
	"context"
	"fmt"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
	"netaware/topo"
)

// twoRacks is a platform of n single-core hosts on two switches joined by
// a slower backbone, so that flows of a collective share links.
func twoRacks(n int) (*platform.Platform, error) {
	a := (n + 1) / 2
	hosts := fmt.Sprintf("  - {names: \"a[0-%d]\", switch: torA, type: one, link: {bandwidth: 1Gbps, latency: 5us}}\n", a-1)
	if n > a {
		hosts += fmt.Sprintf("  - {names: \"b[0-%d]\", switch: torB, type: one, link: {bandwidth: 1Gbps, latency: 5us}}\n", n-a-1)
	}
	y := `version: 1
name: two-racks
switches: [core, torA, torB]
links:
  - {between: [torA, core], bandwidth: 2Gbps, latency: 2us}
  - {between: [torB, core], bandwidth: 2Gbps, latency: 2us}
host_types:
  one:
    cores_per_socket: 1
    overhead: {send: 1us, recv: 1us}
hosts:
` + hosts
	return platform.Parse("two-racks.yaml", []byte(y))
}

// simRun runs body on the simulator (default 64 KiB eager limit, so large
// messages go through rendezvous).
func simRun(ctx context.Context, n int, body func(ctx context.Context, c comm.Comm) error) error {
	p, err := twoRacks(n)
	if err != nil {
		return err
	}
	_, err = sim.Run(ctx, p, sim.Options{}, body)
	return err
}

// fourRacks: 16 hosts on 4 switches, host i on rack i mod 4 (so rank
// order alternates racks), racks joined by a core at half the NIC speed.
func fourRacks() (*platform.Platform, error) {
	y := `version: 1
name: four-racks
switches: [core, t0, t1, t2, t3]
links:
  - {between: [t0, core], bandwidth: 500Mbps, latency: 20us}
  - {between: [t1, core], bandwidth: 500Mbps, latency: 20us}
  - {between: [t2, core], bandwidth: 500Mbps, latency: 20us}
  - {between: [t3, core], bandwidth: 500Mbps, latency: 20us}
host_types:
  one: {cores_per_socket: 1}
hosts:
`
	for i := range 16 {
		y += fmt.Sprintf("  - {names: h%02d, switch: t%d, type: one, link: {bandwidth: 1Gbps, latency: 5us}}\n", i, i%4)
	}
	return platform.Parse("four-racks.yaml", []byte(y))
}

// Seed 002 Sect. 6.2: a pipelined broadcast along a depth-first traversal
// of the tree crosses each inter-switch link once per direction, while a
// pipeline in an order that ignores the tree (here rank order, which
// alternates racks) loads the backbone with many hops at once. In virtual
// time the DFS pipeline must win clearly.
func TestShiraiDFSPipelineBeatsTreeBlindOrder(t *testing.T) {
	tp := &topo.Topology{Version: 1, Size: 16}
	racks := make([][]int, 4)
	for r := range 16 {
		tp.Ranks = append(tp.Ranks, topo.Rank{Rank: r})
		racks[r%4] = append(racks[r%4], r)
	}
	tp.Levels = []topo.Level{{Name: "switch", Groups: racks}}
	n := 4 << 20
	run := func(s *Schedule) time.Duration { return simBcastTime(t, s, n) }
	dfs, err := DFSPipeline(tp, 16, 0, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	blind, err := Pipeline(16, 0, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	td, tb := run(dfs), run(blind)
	t.Logf("4 MiB pipeline over 16 ranks on 4 racks: DFS order %v, rank order %v (%.2fx)", td, tb, float64(tb)/float64(td))
	if float64(tb) < 1.5*float64(td) {
		t.Errorf("DFS pipeline %v is not clearly faster than the rank-order pipeline %v", td, tb)
	}
}
