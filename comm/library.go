package comm

// LibraryBroadcaster is an optional extension of a Comm whose world is an
// MPI library (comm/mpi with Open MPI): the library's own MPI_Bcast, run
// with an algorithm the caller picks. netaware's collectives over
// point-to-point messages reproduce the library's algorithms, but not its
// copies, progress engine and protocol switches; timing the library itself
// is what tells which of its algorithms is fastest for it (tune
// --library).
type LibraryBroadcaster interface {
	// LibraryName names the library ("openmpi").
	LibraryName() string
	// LibraryBcast is called by every rank of the communicator alike (it
	// makes a communicator). It returns a broadcast that runs the
	// library's algorithm alg with segments of seg bytes and fan-out
	// fanout (Open MPI's coll_tuned_bcast_algorithm, its segment size and
	// its tree and chain fan-outs; alg 0 is the library's own choice, 0
	// for seg and fanout their defaults), and a function that frees it.
	// The broadcast blocks until this rank's part is done; it cannot be
	// interrupted.
	LibraryBcast(alg, seg, fanout int) (bcast func(buf []byte, root int) error, free func(), err error)
}
