package longhaul

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
)

// Bordeaux-Toulouse on grid5000-4sites: 1 Gbps (125 MB/s) and a round trip
// of 2 x (25 us + 5 ms + 4 ms + 25 us) = 18.1 ms: BDP 2.2625 MB, window
// 4 MiB (2 MiB is short), eager 8 MiB at a share of 1/2; with 128 KiB
// windows, ceil(2262500/131072) = 18 pieces, 9 helpers per side.
func TestDichevSect32AdviseByHand(t *testing.T) {
	a, err := Advise([]Path{{Name: "bt", Bandwidth: 125e6, RTT: 0.0181}}, 0.5, 65536, 131072)
	if err != nil {
		t.Fatal(err)
	}
	got := a[0]
	if math.Abs(float64(got.BDP)-2262500) > 1 || got.Window != 4<<20 || got.Eager != 8<<20 || got.Pieces != 18 || got.HelpersPerSide != 9 {
		t.Errorf("advice %+v", got)
	}
	// A LAN pair: tiny BDP, the eager floor holds, one piece suffices.
	a, _ = Advise([]Path{{Name: "lan", Bandwidth: 125e6, RTT: 100e-6}}, 0.5, 65536, 131072)
	if a[0].Window != 16384 || a[0].Eager != 65536 || a[0].Pieces != 1 || a[0].HelpersPerSide != 0 {
		t.Errorf("lan advice %+v", a[0])
	}
	for _, bad := range [][]Path{{{Bandwidth: 0, RTT: 1}}, {{Bandwidth: 1, RTT: math.Inf(1)}}} {
		if _, err := Advise(bad, 0.5, 0, 0); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := Advise(nil, 0, 0, 0); err == nil {
		t.Error("sync share 0 accepted")
	}
	w, e := Largest(a)
	if s := strings.Join(OpenMPISettings(w, e), " "); s != "btl_tcp_sndbuf=0 btl_tcp_rcvbuf=0 btl_tcp_eager_limit=65536 btl_tcp_rndv_eager_limit=65536" {
		t.Errorf("Open MPI: %s", s)
	}
	// Settings never lower the kernel's defaults; a window beyond
	// autotuning's reach is set on the sockets and allowed by the sysctls.
	if s := strings.Join(LinuxSettings(w), " "); s != "net.core.rmem_max=212992 net.core.wmem_max=212992 net.ipv4.tcp_rmem=4096 131072 6291456 net.ipv4.tcp_wmem=4096 16384 4194304" {
		t.Errorf("Linux, small window: %s", s)
	}
	if s := strings.Join(OpenMPISettings(16<<20, 32<<20), " "); s != "btl_tcp_sndbuf=16777216 btl_tcp_rcvbuf=16777216 btl_tcp_eager_limit=33554432 btl_tcp_rndv_eager_limit=33554432" {
		t.Errorf("Open MPI, 16 MiB: %s", s)
	}
	if s := LinuxSettings(16 << 20)[2]; s != "net.ipv4.tcp_rmem=4096 131072 16777216" {
		t.Errorf("Linux, 16 MiB: %s", s)
	}
	if s := MPICHSettings(e)[0]; s != "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE=65536" {
		t.Errorf("MPICH: %s", s)
	}
}

func TestPlatformPathsGrid5000(t *testing.T) {
	p, err := platform.Load("grid5000-4sites")
	if err != nil {
		t.Fatal(err)
	}
	paths := PlatformPaths(p)
	if len(paths) != 10 { // 4 sites inside + 6 pairs
		t.Fatalf("%d paths: %+v", len(paths), paths)
	}
	for _, pt := range paths {
		if pt.Name == "bordeaux-01.. - toulouse-01.." {
			if pt.Bandwidth != 125e6 || math.Abs(pt.RTT-0.0181) > 1e-9 {
				t.Errorf("%+v", pt)
			}
			return
		}
	}
	t.Error("no Bordeaux-Toulouse path")
}

func TestMeasuredPathsMedians(t *testing.T) {
	nan := math.NaN()
	rtt := [][]float64{{nan, 1, 5, 7}, {nan, nan, 6, nan}, {nan, nan, nan, 1}, {nan, 9, nan, nan}}
	bw := [][]float64{{nan, 10, 2, 2}, {nan, nan, 3, 1}, {nan, nan, nan, 10}, {nan, nan, nan, nan}}
	got := MeasuredPaths(rtt, bw, [][]int{{0, 1}, {2, 3}}, []string{"a", "b"})
	if len(got) != 3 || got[1].Name != "a - b" || got[1].RTT != 6 || got[1].Bandwidth != 2 {
		t.Errorf("%+v", got)
	}
}

// Seed 000 Sect. 3.2.2 on the two-site platform of the transfer tests:
// Eq. 3.2 fitted to one stream and one helper per side predicts the
// other helper counts within 10% while the windows, not the link, bound
// the streams, and its pick is the best measured count.
func TestDichevEq32PredictsMeasuredTransfers(t *testing.T) {
	p, err := platform.Parse("two-sites.yaml", []byte(twoSites))
	if err != nil {
		t.Fatal(err)
	}
	var rep *Report
	_, err = sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		r, err := Measure(ctx, c, MeasureOptions{Src: 0, Dst: 3, Size: 8 << 20, Helpers: []int{2}, Reps: 1, Tol: 0.05, Tag: 10})
		if r != nil {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 || rep.SrcSide[0] != 1 && rep.SrcSide[0] != 2 || rep.DstSide[0] < 4 {
		t.Fatalf("report %+v", rep)
	}
	for _, row := range rep.Rows {
		t.Logf("%+v", row)
		if math.Abs(row.PredictedS-row.Seconds) > 0.1*row.Seconds {
			t.Errorf("h=%d: Eq. 3.2 %.4fs, measured %.4fs", row.HelpersPerSide, row.PredictedS, row.Seconds)
		}
	}
	if rep.Chosen != 2 || rep.Best != 2 || rep.ChosenLoss != 0 {
		t.Errorf("chosen %d, best %d, loss %v", rep.Chosen, rep.Best, rep.ChosenLoss)
	}
	if math.Abs(rep.Model.Mc-131072)/131072 > 0.1 {
		t.Errorf("m_c %v, want the 128 KiB window +-10%%", rep.Model.Mc)
	}
}

// The reconfiguration of seed 000 Sect. 3.2 ([49]): with no window bound
// one stream fills the link, helpers only add hops, and Measure says so
// and picks none.
func TestDichevSect32NoWindowNeedsNoHelpers(t *testing.T) {
	p, err := platform.Parse("two-sites.yaml", []byte(strings.Replace(twoSites, "tcp: {window_bytes: 128KiB}\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var rep *Report
	_, err = sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		r, err := Measure(ctx, c, MeasureOptions{Src: 0, Dst: 3, Size: 8 << 20, Reps: 1, Tag: 10})
		if r != nil {
			rep = r
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chosen != 0 || rep.Best != 0 || rep.Note == "" || rep.Model.Mc != 0 {
		t.Errorf("report %+v", rep)
	}
}

// Sides: ranks of each end's site first; a flat network still fills both.
func TestSplitSides(t *testing.T) {
	// Ranks 0-5; src 0, dst 3; 1 and 2 near src, 4 and 5 near dst.
	rs := []float64{0, 1, 2, 10, 11, 9}
	rd := []float64{10, 11, 10, 0, 1, 2}
	src, dst := splitSides(0, 3, rs, rd)
	if !reflect.DeepEqual(src, []int{1, 2}) || !reflect.DeepEqual(dst, []int{4, 5}) {
		t.Errorf("sides %v %v", src, dst)
	}
	flat := []float64{1, 1, 1, 1, 1, 1}
	src, dst = splitSides(0, 3, flat, flat)
	if !reflect.DeepEqual(src, []int{1, 2}) || !reflect.DeepEqual(dst, []int{5, 4}) {
		t.Errorf("flat sides %v %v", src, dst)
	}
}
