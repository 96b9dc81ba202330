package coll

import (
	"bytes"
	"context"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
)

// The swarm broadcast delivers the root's bytes on a simulated platform
// through Bcast, for a message that is not a multiple of the fragment.
func TestSwarmBcastThroughBcast(t *testing.T) {
	p, err := platform.Load("../emu/testdata/zero-latency-split.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const m = 300_001
	src := make([]byte, m)
	for i := range src {
		src[i] = byte(i * 7)
	}
	_, err = sim.Run(context.Background(), p, sim.Options{}, func(ctx context.Context, c comm.Comm) error {
		buf := make([]byte, m)
		if c.Rank() == 5 {
			copy(buf, src)
		}
		if err := Bcast(ctx, c, 5, buf, Algorithm{Name: "swarm", SegSize: 4096, K: 3}); err != nil {
			return err
		}
		if !bytes.Equal(buf, src) {
			t.Errorf("rank %d: wrong bytes", c.Rank())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Seed 000 Sect. 4.2.5 (Fig. 4.2): with a bottleneck link, the swarm
// broadcast of a large message beats the binomial tree, which sends the
// whole message across the bottleneck from one rank at a time. Here a
// 100 Mbit trunk between two switches of four 1 Gbit hosts, 4 MiB.
func TestSwarmBeatsBinomialAcrossBottleneck(t *testing.T) {
	p, err := platform.Load("../emu/testdata/zero-latency-split.yaml")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4<<20)
	time := func(a Algorithm) float64 {
		res, err := sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
			return Bcast(ctx, c, 0, buf, a)
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.VirtualTime.Seconds()
	}
	sw, bin := time(Swarm), time(Algorithm{Name: "binomial"})
	if sw >= bin {
		t.Errorf("swarm %.3f s, binomial %.3f s: want the swarm faster", sw, bin)
	}
}
