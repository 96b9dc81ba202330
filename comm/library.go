package comm

import "context"

// LibraryBroadcaster is an optional extension of a Comm whose world is an
// MPI library (comm/mpi with Open MPI or MPICH): the library's own
// MPI_Bcast, run with an algorithm the caller picks. netaware's
// collectives over point-to-point messages reproduce the library's
// algorithms, but not its copies, progress engine and protocol switches;
// timing the library itself is what tells which of its algorithms is
// fastest for it (tune --library).
type LibraryBroadcaster interface {
	// LibraryName names the library ("openmpi" or "mpich").
	LibraryName() string
	// LibraryBcast is called by every rank of the communicator alike (it
	// may make a communicator). It returns a broadcast that runs the
	// library's algorithm a, and a function that frees it and puts the
	// library's own choice back. The broadcast blocks until this rank's
	// part is done; it cannot be interrupted.
	LibraryBcast(a LibraryAlgorithm) (bcast func(buf []byte, root int) error, free func(), err error)
}

// LibraryAlgorithm names one of a library's broadcast algorithms in the
// library's own terms; the zero value is the library's own choice.
type LibraryAlgorithm struct {
	// Open MPI's coll/tuned: coll_tuned_bcast_algorithm (0: the library's
	// choice), its segment size and its tree and chain fan-outs (0: their
	// defaults).
	ID, SegBytes, FanOut int
	// MPICH: a value of MPIR_CVAR_BCAST_INTRA_ALGORITHM, such as
	// "binomial" ("" or "auto": the library's choice).
	Name string
}

// Barrierer is an optional extension of a Comm whose world has a barrier
// of its own (comm/mpi: the library's MPI_Ibarrier). Barrier uses it. The
// measuring harnesses time every operation from the barrier's exit, so a
// barrier's exit skew and the CPU its waiting ranks take count in every
// figure: a library's barrier, which its own benchmarks use, keeps the
// figures comparable with theirs.
type Barrierer interface {
	// Barrier returns once every rank of the communicator has entered it.
	// Every rank calls it in the same order relative to its other
	// barriers on the communicator.
	Barrier(ctx context.Context) error
}
