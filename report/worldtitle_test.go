package report

import (
	"testing"

	"netaware/dataset"
)

// TestWorldTitleNamesEveryWorld: a report rebuilt from a dataset names the
// world the measurements came from, the MPI world included.
func TestWorldTitleNamesEveryWorld(t *testing.T) {
	for _, c := range []struct {
		w    dataset.World
		want string
	}{
		{dataset.World{Kind: "sim", Platform: "zhu-2racks", Size: 32}, "zhu-2racks (simulated, 32 ranks)"},
		{dataset.World{Kind: "tcp", Size: 8}, "8 ranks over TCP"},
		{dataset.World{Kind: "mpi", Size: 8}, "8 ranks over MPI"},
		{dataset.World{Kind: "local", Size: 4}, "4 local ranks"},
	} {
		if got := WorldTitle(c.w); got != c.want {
			t.Errorf("WorldTitle(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}
