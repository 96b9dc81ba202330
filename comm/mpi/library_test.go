//go:build mpi

package mpi

import (
	"fmt"
	"testing"

	"netaware/comm"
)

// libraryChoices are the broadcast algorithms of the linked library that
// TestRankLibraryBcast runs, the control variable that holds the choice,
// and choices the library must refuse.
func libraryChoices() (ok []comm.LibraryAlgorithm, choiceVar string, bad []comm.LibraryAlgorithm) {
	if library == "mpich" {
		for _, n := range []string{"", "auto", "binomial", "scatter_recursive_doubling_allgather", "scatter_ring_allgather"} {
			ok = append(ok, comm.LibraryAlgorithm{Name: n})
		}
		return ok, "MPIR_CVAR_BCAST_INTRA_ALGORITHM", []comm.LibraryAlgorithm{{ID: 6}, {Name: "no-such-algorithm"}, {SegBytes: -1}}
	}
	for id := 0; id <= 9; id++ {
		for _, seg := range []int{0, 8192} {
			ok = append(ok, comm.LibraryAlgorithm{ID: id, SegBytes: seg})
		}
	}
	return ok, "coll_tuned_bcast_algorithm", []comm.LibraryAlgorithm{{Name: "binomial"}, {ID: -1}}
}

// TestRankLibraryBcast: every broadcast algorithm of the library, chosen
// through LibraryBcast, delivers the root's bytes to every rank, from two
// roots (Open MPI's with and without segments); the library's choice is
// put back after each; choices in another library's terms, unknown names
// and negative values are refused, and MPICH refuses a second choice while
// one is in use.
func TestRankLibraryBcast(t *testing.T) {
	requireMPI(t)
	ok, choiceVar, bad := libraryChoices()
	before, err := controlVar(choiceVar)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_003
	buf := make([]byte, n)
	for k, a := range ok {
		bcast, free, err := world.LibraryBcast(a)
		if err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
		for _, root := range []int{0, world.Size() - 1} {
			for i := range buf {
				buf[i] = 0
				if world.Rank() == root {
					buf[i] = byte(i*7 + k + root)
				}
			}
			if err := bcast(buf, root); err != nil {
				t.Fatalf("%+v, root %d: %v", a, root, err)
			}
			for i, b := range buf {
				if b != byte(i*7+k+root) {
					t.Fatalf("rank %d, %+v, root %d: byte %d is %d", world.Rank(), a, root, i, b)
				}
			}
		}
		if library == "mpich" {
			if _, _, err := world.LibraryBcast(a); err == nil {
				t.Fatalf("%+v: a second choice accepted while the first is in use", a)
			}
		}
		free()
		if now, err := controlVar(choiceVar); err != nil || now != before {
			t.Fatalf("after %+v %s is %d (%v), want %d again", a, choiceVar, now, err, before)
		}
	}
	for _, a := range bad {
		if _, free, err := world.LibraryBcast(a); err == nil {
			free()
			t.Errorf("%+v accepted", a)
		}
	}
	if bcast, free, err := world.LibraryBcast(comm.LibraryAlgorithm{}); err == nil {
		if err := bcast(buf, world.Size()); err == nil {
			t.Error("root outside the communicator accepted")
		}
		free()
	} else {
		t.Error(fmt.Errorf("the library's own choice: %w", err))
	}
}

// TestRankChoiceValue: a control variable's value by name, from its MPI_T
// enumeration (Open MPI's algorithm ids) or, without one, from the order
// in which its description lists its choices (MPICH 4.0); names it lacks,
// and a list of choices the description does not match, are refused.
func TestRankChoiceValue(t *testing.T) {
	requireMPI(t)
	name, item, want := "coll_tuned_bcast_algorithm", "binomial", 6
	var order, wrong []string
	if library == "mpich" {
		name, item, want = "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "scatter_ring_allgather", 5
		order = []string{"auto", "binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather"}
		wrong = []string{"binomial", "auto"}
	}
	if v, err := choiceValue(name, item, order); err != nil || v != want {
		t.Fatalf("%s = %s: %d (%v), want %d", name, item, v, err, want)
	}
	if _, err := choiceValue(name, "no-such-algorithm", order); err == nil {
		t.Error("an unknown name accepted")
	}
	if wrong != nil {
		if _, err := choiceValue(name, "binomial", wrong); err == nil {
			t.Error("choices out of the description's order accepted")
		}
	}
}
