package tune

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/local"
)

// libraryComm stands in for the MPI world with library name (openmpi or
// mpich): its "library" broadcast is comm's own, and it records what it
// was asked to force.
type libraryComm struct {
	comm.Comm
	name   string
	mu     *sync.Mutex
	forced *[]comm.LibraryAlgorithm
}

func (l libraryComm) LibraryName() string { return l.name }

func (l libraryComm) LibraryBcast(a comm.LibraryAlgorithm) (func([]byte, int) error, func(), error) {
	if l.Rank() == 0 {
		l.mu.Lock()
		*l.forced = append(*l.forced, a)
		l.mu.Unlock()
	}
	bcast := func(b []byte, root int) error {
		if root != 0 {
			return errors.New("root 0 only")
		}
		got, err := comm.BcastBytes(context.Background(), l.Comm, b)
		copy(b, got)
		return err
	}
	return bcast, func() {}, nil
}

// timeLibrary runs Run with Library set on 4 ranks of a library world
// named lib, and returns the measurements and what was forced.
func timeLibrary(t *testing.T, lib string, algs []coll.Algorithm) ([]Measurement, []comm.LibraryAlgorithm, error) {
	cfg := BenchConfig{Sizes: []int{1000, 100_000}, Reps: 2, Warmup: -1, Library: true}
	var mu sync.Mutex
	var forced []comm.LibraryAlgorithm
	var ms []Measurement
	err := local.Run(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
		got, err := Run(ctx, libraryComm{c, lib, &mu, &forced}, cfg, algs)
		if c.Rank() == 0 {
			ms = got
		}
		return err
	})
	return ms, forced, err
}

// With Library set, every algorithm is timed as the library's own
// broadcast with its equivalent in that library forced (ompi-fixed: the
// library's choice), and the measurements give that library's rules
// file only: Open MPI's times say nothing of MPICH, nor MPICH's of Open
// MPI.
func TestRunTimesTheLibrarysOwnBroadcast(t *testing.T) {
	for _, tc := range []struct {
		lib  string
		algs []coll.Algorithm
		want []comm.LibraryAlgorithm // per algorithm
		bad  coll.Algorithm          // no equivalent in lib
	}{
		{"openmpi",
			[]coll.Algorithm{Baseline, {Name: "linear"}, {Name: "binomial", SegSize: 8192}, {Name: "chain", SegSize: 32768}, {Name: "k-chain", K: 3, SegSize: 8192}, {Name: "scatter-allgather"}},
			[]comm.LibraryAlgorithm{{}, {ID: 1}, {ID: 6, SegBytes: 8192}, {ID: 2, SegBytes: 32768, FanOut: 1}, {ID: 2, SegBytes: 8192, FanOut: 3}, {ID: 8}},
			coll.Algorithm{Name: "hierarchical"}},
		{"mpich",
			[]coll.Algorithm{Baseline, {Name: "binomial-inorder"}, {Name: "scatter-allgather"}, {Name: "scatter-allgather-ring"}},
			[]comm.LibraryAlgorithm{{}, {Name: "binomial"}, {Name: "scatter_recursive_doubling_allgather"}, {Name: "scatter_ring_allgather"}},
			coll.Algorithm{Name: "binomial"}},
	} {
		ms, forced, err := timeLibrary(t, tc.lib, tc.algs)
		if err != nil {
			t.Fatalf("%s: %v", tc.lib, err)
		}
		// One choice per algorithm and size.
		var want []comm.LibraryAlgorithm
		for _, w := range tc.want {
			want = append(want, w, w)
		}
		if !slices.Equal(forced, want) {
			t.Errorf("%s: forced %v, want %v", tc.lib, forced, want)
		}
		if len(ms) != len(tc.algs)*2 {
			t.Fatalf("%s: %d measurements, want %d", tc.lib, len(ms), len(tc.algs)*2)
		}
		for _, m := range ms {
			if m.Library != tc.lib || len(m.TimesS) != 2 || m.Err != "" {
				t.Errorf("%s at %d bytes: library %q, %d times, error %q", m.Label, m.Bytes, m.Library, len(m.TimesS), m.Err)
			}
			if base := m.Algorithm.Name == Baseline.Name; base && (m.Label == MPICHAutoLabel) != (tc.lib == "mpich") {
				t.Errorf("%s: the baseline is labelled %q", tc.lib, m.Label)
			}
		}
		out, err := Decide(&Report{Version: ReportVersion, Ranks: 4, Measurements: ms}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (out.OMPIConf != "") != (tc.lib == "openmpi") || (out.MPICHJSON != nil) != (tc.lib == "mpich") {
			t.Errorf("%s: Open MPI rules %d bytes, MPICH file %d bytes: want %s's only", tc.lib, len(out.OMPIConf), len(out.MPICHJSON), tc.lib)
		}
		// An algorithm the library cannot be told to run is refused
		// before measuring.
		if _, _, err := timeLibrary(t, tc.lib, []coll.Algorithm{tc.bad}); err == nil || !strings.Contains(err.Error(), "no "+tc.lib+" equivalent") {
			t.Errorf("%s, %s: %v", tc.lib, tc.bad, err)
		}
	}
	// Without a library world Run refuses before measuring.
	cfg := BenchConfig{Sizes: []int{1000}, Library: true}
	err := local.Run(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		_, err := Run(ctx, c, cfg, []coll.Algorithm{Baseline})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "MPI world") {
		t.Errorf("plain world: %v", err)
	}
}
