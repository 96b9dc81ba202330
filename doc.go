// Package netaware is where a Go program starts: it starts or joins a
// world of ranks, discovers how they are connected, and runs collectives
// that follow what it found.
//
// A program is a function every rank runs (SPMD, as in MPI). One call
// starts the world and runs it:
//
//	netaware.Simulate(ctx, "zhu-2racks", netaware.SimOptions{}, prog) // simulated platform, virtual time
//	netaware.Goroutines(ctx, 8, prog)                                 // goroutines of this process
//	netaware.LoopbackTCP(ctx, 8, prog)                                // real TCP over 127.0.0.1, in this process
//	netaware.JoinTCP(ctx, prog)                                       // this process's rank, under netaware launch, mpirun or srun
//
// An MPI world gets its call beside JoinTCP when the comm/mpi transport
// lands; New already wraps any comm.Comm.
//
// Inside prog, the Comm first discovers the topology and the performance
// model; every rank gets both (rank 0 also gets everything measured, to
// save):
//
//	d, err := c.Discover(ctx, netaware.DefaultDiscoverOptions())
//
// (or SetTopology with a topology.json from an earlier run, and SetModel
// with its model.json). From then on every collective — Bcast, Reduce,
// Allreduce, ReduceScatter, Scatter(v), Gather(v), Allgather, Alltoallv,
// Barrier — picks its algorithm per call: the decision table's for the
// communicator and message size when one is set (SetDecision, tables from
// netaware tune), else a topology-aware default when a topology is known,
// else a topology-blind one; Algorithm says which. A reduction whose
// operation is not commutative (coll.Op.NonCommutative) runs in rank order.
//
// Each step has a runnable example; docs/library.md has a complete program.
// The packages below do the work and can be used directly: comm (the
// communicator interface and its transports), discover, probe and dataset
// (measurements), topo (topology.json), model (model.json), coll (every
// algorithm, schedules, decision tables), tune.
package netaware
