// Command allreduce discovers how its ranks are connected and times a
// topology-aware allreduce against a topology-blind one. It runs on a
// simulated platform by default, and as one rank of a TCP world when a
// launcher started it ('netaware launch -n 8 -- allreduce').
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"netaware"
	"netaware/coll"
	"netaware/platform"
)

func main() {
	plat := flag.String("platform", "zhu-2racks", "simulated platform, when no launcher started this process")
	perHost := flag.Int("per-host", 2, "simulator: ranks per host")
	order := flag.String("order", "cyclic", "simulator: rank order, block or cyclic")
	mib := flag.Int("mib", 1, "vector size in MiB")
	out := flag.String("topology", "", "write the discovered topology to this file")
	flag.Parse()

	prog := func(ctx context.Context, c *netaware.Comm) error {
		d, err := c.Discover(ctx, netaware.DefaultDiscoverOptions())
		if err != nil {
			return err
		}
		if c.Rank() == 0 && *out != "" {
			if err := d.Topology.WriteFile(*out); err != nil {
				return err
			}
		}
		v := make([]float64, *mib<<17)
		for i := range v {
			v[i] = float64(c.Rank())
		}
		send, recv := coll.Float64Bytes(v), make([]byte, 8*len(v))
		aware, _ := c.Algorithm(netaware.Allreduce, len(send), coll.SumFloat64)
		tAware, err := timed(ctx, c, send, recv)
		if err != nil {
			return err
		}
		topology := c.Topology()
		if err := c.SetTopology(nil); err != nil { // the same call, topology-blind
			return err
		}
		blind, _ := c.Algorithm(netaware.Allreduce, len(send), coll.SumFloat64)
		tBlind, err := timed(ctx, c, send, recv)
		if err != nil {
			return err
		}
		if err := c.SetTopology(topology); err != nil {
			return err
		}
		if want := float64(c.Size() * (c.Size() - 1) / 2); coll.BytesFloat64(recv)[0] != want {
			return fmt.Errorf("rank %d: sum %g, want %g", c.Rank(), coll.BytesFloat64(recv)[0], want)
		}
		if c.Rank() == 0 {
			fmt.Printf("%d ranks, %d levels; allreduce of %d MiB: %s %v, %s %v\n",
				c.Size(), len(d.Topology.Levels), *mib, aware, tAware, blind, tBlind)
		}
		return nil
	}

	ctx := context.Background()
	err := netaware.JoinTCP(ctx, prog)
	if errors.Is(err, netaware.ErrNoLauncher) {
		err = simulate(ctx, *plat, *perHost, *order, prog)
	}
	if err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// simulate runs prog on the platform with its ranks placed perHost to a
// host in the given order (cyclic: neighbours in rank order on different
// hosts, which a topology-blind ring pays for).
func simulate(ctx context.Context, name string, perHost int, order string, prog netaware.Program) error {
	p, err := platform.Load(name)
	if err != nil {
		return err
	}
	if p, err = p.Place(perHost, order); err != nil {
		return err
	}
	_, err = netaware.SimulatePlatform(ctx, p, netaware.SimOptions{}, prog)
	return err
}

// timed runs one allreduce between two barriers and returns how long it
// took on this rank's clock (virtual time in the simulator).
func timed(ctx context.Context, c *netaware.Comm, send, recv []byte) (time.Duration, error) {
	if err := c.Barrier(ctx); err != nil {
		return 0, err
	}
	start := c.Raw().Now()
	if err := c.Allreduce(ctx, send, recv, coll.SumFloat64); err != nil {
		return 0, err
	}
	if err := c.Barrier(ctx); err != nil {
		return 0, err
	}
	return c.Raw().Now() - start, nil
}
