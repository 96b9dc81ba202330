package netaware_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"netaware"
	"netaware/coll"
)

// Discover the topology of a simulated platform (two racks of 15 hosts),
// then run an allreduce that follows it: every rank adds its rank number
// to a 1 MiB vector, and Allreduce picks its algorithm from the topology.
func Example() {
	ctx := context.Background()
	_, err := netaware.Simulate(ctx, "zhu-2racks", netaware.SimOptions{}, func(ctx context.Context, c *netaware.Comm) error {
		d, err := c.Discover(ctx, netaware.DefaultDiscoverOptions())
		if err != nil {
			return err
		}
		v := slices.Repeat([]float64{float64(c.Rank())}, 1<<17)
		sum := make([]byte, 8*len(v))
		if err := c.Allreduce(ctx, coll.Float64Bytes(v), sum, coll.SumFloat64); err != nil {
			return err
		}
		if c.Rank() == 0 {
			alg, _ := c.Algorithm(netaware.Allreduce, len(sum), coll.SumFloat64)
			fmt.Println(d.Topology.Levels[1].Name, len(d.Topology.Levels[1].Groups), alg, coll.BytesFloat64(sum)[0])
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: switch 2 dfs-ring 435
}

// The same program on four ranks of a real TCP world over loopback (a
// launcher's world is joined with JoinTCP instead). On one machine the
// topology is one host, and the allreduce follows it all the same.
func ExampleLoopbackTCP() {
	ctx := context.Background()
	err := netaware.LoopbackTCP(ctx, 4, func(ctx context.Context, c *netaware.Comm) error {
		d, err := c.Discover(ctx, netaware.DefaultDiscoverOptions())
		if err != nil {
			return err
		}
		sum := make([]byte, 8)
		if err := c.Allreduce(ctx, coll.Float64Bytes([]float64{float64(c.Rank())}), sum, coll.SumFloat64); err != nil {
			return err
		}
		if c.Rank() == 0 {
			alg, _ := c.Algorithm(netaware.Allreduce, len(sum), coll.SumFloat64)
			fmt.Println(d.Topology.Size, alg, coll.BytesFloat64(sum)[0])
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: 4 levels-allreduce(variant=recursive-doubling) 6
}

// Start a world of goroutines and broadcast from rank 2: without a
// topology, collectives use topology-blind algorithms (for a broadcast,
// Open MPI's fixed decision).
func ExampleGoroutines() {
	err := netaware.Goroutines(context.Background(), 4, func(ctx context.Context, c *netaware.Comm) error {
		buf := []byte("....")
		if c.Rank() == 2 {
			copy(buf, "news")
		}
		if err := c.Bcast(ctx, 2, buf); err != nil {
			return err
		}
		if c.Rank() == 3 {
			alg, _ := c.Algorithm(netaware.Bcast, len(buf), coll.Op{})
			fmt.Println(string(buf), alg)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: news binary
}

// Join the TCP world a launcher started: run the program under
// 'netaware launch -n 8 -- ./prog' (or mpirun, srun) and each process
// becomes one rank.
func ExampleJoinTCP() {
	err := netaware.JoinTCP(context.Background(), func(ctx context.Context, c *netaware.Comm) error {
		_, err := c.Discover(ctx, netaware.DefaultDiscoverOptions())
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Discovery hands the topology and the model to every rank, not only to
// rank 0; rank 0 also gets everything measured (Outcome) to save.
func ExampleComm_Discover() {
	_, err := netaware.Simulate(context.Background(), "zhu-2racks", netaware.SimOptions{}, func(ctx context.Context, c *netaware.Comm) error {
		d, err := c.Discover(ctx, netaware.DefaultDiscoverOptions())
		if err != nil {
			return err
		}
		if c.Rank() == 29 {
			fmt.Println(d.Topology.Size, "ranks,", len(d.Topology.Levels), "levels, model of", d.Model.Size, "ranks, outcome on this rank:", d.Outcome != nil)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: 30 ranks, 3 levels, model of 30 ranks, outcome on this rank: false
}

// Every collective of MPI's core set, on 4 goroutine ranks: here a
// reduce-scatter of sums (each rank ends with its block of the sum of
// everyone's vectors), a gather of one byte per rank, and a barrier.
func ExampleComm_ReduceScatter() {
	err := netaware.Goroutines(context.Background(), 4, func(ctx context.Context, c *netaware.Comm) error {
		v := []float64{1, 2, 3, 4} // block r of every rank's vector is r+1
		mine := make([]byte, 8)
		if err := c.ReduceScatter(ctx, coll.Float64Bytes(v), mine, coll.SumFloat64); err != nil {
			return err
		}
		all := make([]byte, 8*c.Size())
		if err := c.Gather(ctx, 0, mine, all); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Println(coll.BytesFloat64(all))
		}
		return c.Barrier(ctx)
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: [4 8 12 16]
}

// A decision table (netaware tune writes them) overrides the default
// choice for the communicator and message sizes it has rules for.
func ExampleComm_SetDecision() {
	table := []byte(`{"version": 1, "rules": [{"min_ranks": 2, "sizes": [
	  {"below_bytes": 1024, "algorithm": {"name": "knomial", "k": 3}}]}]}`)
	d, err := coll.ParseDecision(table)
	if err != nil {
		log.Fatal(err)
	}
	err = netaware.Goroutines(context.Background(), 5, func(ctx context.Context, c *netaware.Comm) error {
		if err := c.SetDecision(netaware.Bcast, d); err != nil {
			return err
		}
		small, _ := c.Algorithm(netaware.Bcast, 100, coll.Op{})
		large, _ := c.Algorithm(netaware.Bcast, 1<<20, coll.Op{})
		if c.Rank() == 0 {
			fmt.Println(small, "|", large)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: knomial(k=3) | chain
}
