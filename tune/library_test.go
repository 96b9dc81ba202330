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

// libraryComm stands in for the MPI world with Open MPI: its "library"
// broadcast is comm's own, and it records what it was asked to force.
type libraryComm struct {
	comm.Comm
	mu     *sync.Mutex
	forced *[][3]int
}

func (l libraryComm) LibraryName() string { return "openmpi" }

func (l libraryComm) LibraryBcast(alg, seg, fanout int) (func([]byte, int) error, func(), error) {
	if l.Rank() == 0 {
		l.mu.Lock()
		*l.forced = append(*l.forced, [3]int{alg, seg, fanout})
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

// With Library set, every algorithm is timed as the library's own
// broadcast with its Open MPI equivalent forced (ompi-fixed: the
// library's choice, 0), and the measurements then give Open MPI rules but
// no MPICH file: Open MPI's times say nothing of MPICH.
func TestRunTimesTheLibrarysOwnBroadcast(t *testing.T) {
	algs := []coll.Algorithm{Baseline, {Name: "linear"}, {Name: "binomial", SegSize: 8192}, {Name: "chain", SegSize: 32768}, {Name: "k-chain", K: 3, SegSize: 8192}, {Name: "scatter-allgather"}}
	cfg := BenchConfig{Sizes: []int{1000, 100_000}, Reps: 2, Warmup: -1, Library: true}
	var mu sync.Mutex
	var forced [][3]int
	var ms []Measurement
	err := local.Run(context.Background(), 4, func(ctx context.Context, c comm.Comm) error {
		got, err := Run(ctx, libraryComm{c, &mu, &forced}, cfg, algs)
		if c.Rank() == 0 {
			ms = got
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// One communicator per algorithm and size: {alg, segment, fan-out}.
	want := [][3]int{{0, 0, 0}, {1, 0, 0}, {6, 8192, 0}, {2, 32768, 1}, {2, 8192, 3}, {8, 0, 0}}
	var wantAll [][3]int
	for _, w := range want {
		wantAll = append(wantAll, w, w)
	}
	if !slices.Equal(forced, wantAll) {
		t.Errorf("forced %v, want %v", forced, wantAll)
	}
	if len(ms) != len(algs)*2 {
		t.Fatalf("%d measurements, want %d", len(ms), len(algs)*2)
	}
	for _, m := range ms {
		if m.Library != "openmpi" || len(m.TimesS) != 2 || m.Err != "" {
			t.Errorf("%s at %d bytes: library %q, %d times, error %q", m.Label, m.Bytes, m.Library, len(m.TimesS), m.Err)
		}
	}
	out, err := Decide(&Report{Version: ReportVersion, Ranks: 4, Measurements: ms}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.OMPIConf == "" || out.MPICHJSON != nil {
		t.Errorf("Open MPI rules %d bytes, MPICH file %d bytes: want Open MPI's only", len(out.OMPIConf), len(out.MPICHJSON))
	}

	// Without a library world, or with an algorithm Open MPI cannot be
	// told to run, Run refuses before measuring.
	err = local.Run(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		_, err := Run(ctx, c, cfg, algs[:1])
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "MPI world") {
		t.Errorf("plain world: %v", err)
	}
	err = local.Run(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		_, err := Run(ctx, libraryComm{c, &mu, &forced}, cfg, []coll.Algorithm{{Name: "hierarchical"}})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "no Open MPI equivalent") {
		t.Errorf("hierarchical: %v", err)
	}
}
