// Package mpi is a comm.Comm over the system's MPI library, through cgo, so
// that measurements and collectives use the stack MPI applications use
// (shared memory, InfiniBand, the library's own TCP).
//
// It is absent from the default build. Build tag mpi selects it, linked
// against Open MPI (pkg-config name ompi-c); tags mpi and mpich link MPICH
// (pkg-config name mpich) instead:
//
//	go build -tags mpi ./cmd/netaware          # Open MPI
//	go build -tags mpi,mpich ./cmd/netaware    # MPICH
//
// A binary must be started by its own library's launcher (mpirun.openmpi,
// mpiexec.mpich / mpirun.mpich, or srun with that library's PMI).
//
// Matching is MPI's: every comm.Comm is a pair of MPI communicators, one for
// user tags (>= 0, where comm.AnyTag is MPI_ANY_TAG) and one for comm's
// reserved negative system tags (system tag t travels as MPI tag -t), so
// that a receive with AnyTag never matches a library protocol's message.
// Sub is MPI_Comm_create_group over the listed ranks: it synchronizes the
// listed ranks (and only them), which comm.Comm allows.
//
// Threading: goroutines call a Comm concurrently and the Go scheduler moves
// them between OS threads, so the package asks for MPI_THREAD_MULTIPLE,
// which Open MPI 4.1 and MPICH 4.0 both grant; MPI then serializes what it
// must itself. A library that grants only MPI_THREAD_SERIALIZED gets one
// process-wide lock around every MPI call instead. No call blocks inside
// MPI: requests are started with MPI_Isend/MPI_Issend/MPI_Irecv and polled
// with MPI_Test (spinning first, then yielding, then sleeping), so that a
// context's cancellation is seen (a pending receive is then cancelled
// with MPI_Cancel) and a waiting goroutine does not hold an OS thread in C.
// This was chosen over funnelling every call through one progress goroutine
// on a locked OS thread because that hand-off costs two goroutine wake-ups
// per message, more than a 1-byte message takes in shared memory.
package mpi
