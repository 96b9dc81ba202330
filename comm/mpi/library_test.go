//go:build mpi

package mpi

import (
	"fmt"
	"testing"
)

// TestRankLibraryBcast: every Open MPI broadcast algorithm, chosen through
// LibraryBcast, delivers the root's bytes to every rank, from two roots,
// with and without segments; the library's variables are put back after
// each. With MPICH it is refused with a message.
func TestRankLibraryBcast(t *testing.T) {
	requireMPI(t)
	if library != "openmpi" {
		if _, _, err := world.LibraryBcast(6, 0, 0); err == nil {
			t.Fatal("LibraryBcast accepted with MPICH")
		}
		return
	}
	const n = 200_003
	buf := make([]byte, n)
	for alg := 0; alg <= 9; alg++ {
		for _, seg := range []int{0, 8192} {
			bcast, free, err := world.LibraryBcast(alg, seg, 0)
			if err != nil {
				t.Fatalf("algorithm %d, segment %d: %v", alg, seg, err)
			}
			for _, root := range []int{0, world.Size() - 1} {
				for i := range buf {
					buf[i] = 0
					if world.Rank() == root {
						buf[i] = byte(i*7 + alg + seg + root)
					}
				}
				if err := bcast(buf, root); err != nil {
					t.Fatalf("algorithm %d, segment %d, root %d: %v", alg, seg, root, err)
				}
				for i, b := range buf {
					if b != byte(i*7+alg+seg+root) {
						t.Fatalf("rank %d, algorithm %d, segment %d, root %d: byte %d is %d", world.Rank(), alg, seg, root, i, b)
					}
				}
			}
			free()
			if now, err := controlVar("coll_tuned_bcast_algorithm"); err != nil || now != 0 {
				t.Fatalf("after algorithm %d the variable is %d (%v), want 0 again", alg, now, err)
			}
		}
	}
	if _, _, err := world.LibraryBcast(-1, 0, 0); err == nil {
		t.Error("algorithm -1 accepted")
	}
	if bcast, free, err := world.LibraryBcast(0, 0, 0); err == nil {
		if err := bcast(buf, world.Size()); err == nil {
			t.Error("root outside the communicator accepted")
		}
		free()
	} else {
		t.Error(fmt.Errorf("default algorithm: %w", err))
	}
}
