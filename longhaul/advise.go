package longhaul

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"gonum.org/v1/gonum/stat"

	"netaware/platform"
)

// Advise's defaults: a rendezvous round trip may cost at most half of a
// message's transfer, and the eager threshold never goes below 64 KiB,
// the MPI libraries' own default.
const (
	DefaultSyncShare = 0.5
	DefaultMinEager  = 64 << 10
)

// Path is one link or group pair to advise on: its bottleneck bandwidth
// and round-trip time.
type Path struct {
	Name      string  `json:"name"`
	Bandwidth float64 `json:"bandwidth_bytes_per_s"`
	RTT       float64 `json:"rtt_s"`
}

// Advice is what would remove the synchronisation cost on one path
// (seed 000 Sect. 3.2, the reconfiguration of its reference [49]): a TCP
// window of at least the bandwidth-delay product, so one stream fills the
// path without waiting for acknowledgements, and an eager threshold above
// which the rendezvous round trip costs at most SyncShare of a message's
// transfer. With the window as it is, the long-haul transfer needs
// Pieces pieces in flight (HelpersPerSide helpers per side) for the same.
type Advice struct {
	Path
	BDP            int64   `json:"bdp_bytes"`
	Window         int64   `json:"tcp_window_bytes"`
	Eager          int64   `json:"eager_threshold_bytes"`
	SyncShare      float64 `json:"sync_share"`
	CurrentWindow  int64   `json:"current_window_bytes,omitempty"`
	Pieces         int     `json:"pieces_at_current_window,omitempty"`
	HelpersPerSide int     `json:"helpers_per_side_at_current_window,omitempty"`
}

// pow2 rounds up to a power of two (a buffer size administrators set).
func pow2(x float64) int64 {
	if x <= 1 {
		return 1
	}
	if x >= 1<<62 {
		return 1 << 62
	}
	return 1 << bits.Len64(uint64(math.Ceil(x))-1)
}

// Advise computes the advice for every path. syncShare (0 < s <= 1) bounds
// the rendezvous round trip's share: a message of m >= BDP/s bytes takes
// at least m/B >= RTT/s on the wire, so one extra RTT costs at most s of
// it; smaller messages go eagerly. minEager is the floor of the eager
// threshold (the library's default: advice never lowers it). currentWindow
// (0 = unknown) gives the pieces a long-haul transfer needs instead.
func Advise(paths []Path, syncShare float64, minEager, currentWindow int64) ([]Advice, error) {
	if !(syncShare > 0 && syncShare <= 1) {
		return nil, fmt.Errorf("advise: sync share %v: want 0 < s <= 1", syncShare)
	}
	if minEager < 0 || currentWindow < 0 {
		return nil, fmt.Errorf("advise: eager %d, window %d: want >= 0", minEager, currentWindow)
	}
	out := make([]Advice, len(paths))
	for i, p := range paths {
		if !(p.Bandwidth > 0) || !(p.RTT > 0) || math.IsInf(p.Bandwidth, 0) || math.IsInf(p.RTT, 0) {
			return nil, fmt.Errorf("advise: path %q: bandwidth %v B/s, rtt %v s: want finite and > 0", p.Name, p.Bandwidth, p.RTT)
		}
		bdp := p.Bandwidth * p.RTT
		a := Advice{Path: p, BDP: int64(math.Ceil(bdp)), Window: pow2(bdp), SyncShare: syncShare,
			Eager: max(pow2(bdp/syncShare), minEager), CurrentWindow: currentWindow}
		if currentWindow > 0 {
			a.Pieces = int(math.Ceil(bdp / float64(currentWindow)))
			a.HelpersPerSide = a.Pieces / 2 // the least h with 2h+1 >= pieces
		}
		out[i] = a
	}
	return out, nil
}

// Largest is the advice that covers every path: the largest window and
// eager threshold.
func Largest(as []Advice) (window, eager int64) {
	for _, a := range as {
		window, eager = max(window, a.Window), max(eager, a.Eager)
	}
	return window, eager
}

// Linux's defaults (Documentation/networking/ip-sysctl): receive and send
// autotuning grow a connection's buffers up to tcp_rmem's and tcp_wmem's
// maxima; rmem_max and wmem_max cap buffers a program sets itself.
const (
	linuxRmemMax    = 212992
	linuxTCPRmemMax = 6291456
	linuxTCPWmemMax = 4194304
)

// OpenMPISettings are the MCA parameters of Open MPI's TCP BTL that apply
// a window and an eager threshold. Socket buffers set by a program turn
// the kernel's autotuning off, so they are set only for a window beyond
// what autotuning reaches by default; otherwise 0 leaves them to the
// kernel (older Open MPI releases fixed them at 128 KiB).
func OpenMPISettings(window, eager int64) []string {
	buf := int64(0)
	if window > linuxTCPWmemMax {
		buf = window
	}
	return []string{
		fmt.Sprintf("btl_tcp_sndbuf=%d", buf),
		fmt.Sprintf("btl_tcp_rcvbuf=%d", buf),
		fmt.Sprintf("btl_tcp_eager_limit=%d", eager),
		fmt.Sprintf("btl_tcp_rndv_eager_limit=%d", eager),
	}
}

// MPICHSettings are MPICH's control variables for the eager threshold
// (ch3 and ch4 devices); MPICH leaves TCP buffers to the kernel's
// autotuning, bounded by the sysctls of LinuxSettings.
func MPICHSettings(eager int64) []string {
	return []string{
		fmt.Sprintf("MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE=%d", eager),
		fmt.Sprintf("MPIR_CVAR_CH4_EAGER_MAX_MSG_SIZE=%d", eager),
	}
}

// LinuxSettings are the sysctls that let TCP windows grow to window bytes
// (the administrator's step of [49]): the socket buffer caps and the
// autotuning maxima, never below the kernel's defaults.
func LinuxSettings(window int64) []string {
	return []string{
		fmt.Sprintf("net.core.rmem_max=%d", max(window, linuxRmemMax)),
		fmt.Sprintf("net.core.wmem_max=%d", max(window, linuxRmemMax)),
		fmt.Sprintf("net.ipv4.tcp_rmem=4096 131072 %d", max(window, linuxTCPRmemMax)),
		fmt.Sprintf("net.ipv4.tcp_wmem=4096 16384 %d", max(window, linuxTCPWmemMax)),
	}
}

// PlatformPaths lists the paths between the groups of a simulated
// platform's coarsest ground-truth level with two or more groups (sites,
// racks), and inside each group: per pair, the route between the groups'
// first ranks, its bottleneck bandwidth and twice its latency.
func PlatformPaths(p *platform.Platform) []Path {
	levels := p.Truth()
	var groups [][]int
	for i := len(levels) - 1; i >= 0; i-- {
		if len(levels[i].Groups) >= 2 {
			groups = levels[i].Groups
			break
		}
	}
	if groups == nil {
		all := make([]int, p.NumRanks())
		for r := range all {
			all[r] = r
		}
		groups = [][]int{all}
	}
	name := func(g []int) string {
		h, _, _ := p.RankIdentity(g[0])
		return h + ".."
	}
	path := func(a, b int, label string) (Path, bool) {
		rt := p.Route(a, b)
		bw := math.Inf(1)
		for _, r := range rt.Forward {
			bw = math.Min(bw, p.Resources()[r].BandwidthBps)
		}
		if rt.LatencyS <= 0 || math.IsInf(bw, 1) {
			return Path{}, false
		}
		return Path{Name: label, Bandwidth: bw, RTT: 2 * rt.LatencyS}, true
	}
	var out []Path
	for i, g := range groups {
		if len(g) >= 2 {
			if pt, ok := path(g[0], g[1], name(g)+" (inside)"); ok {
				out = append(out, pt)
			}
		}
		for _, h := range groups[i+1:] {
			if pt, ok := path(g[0], h[0], name(g)+" - "+name(h)); ok {
				out = append(out, pt)
			}
		}
	}
	return out
}

// MeasuredPaths lists the paths between (and inside) the given groups of
// ranks from measured matrices: per group pair, the median round trip
// (rtt[i][j], seconds; NaN = not measured) and the median bandwidth
// (bw[i][j], bytes/s) over its measured rank pairs. A group pair without
// both measurements is left out.
func MeasuredPaths(rtt, bw [][]float64, groups [][]int, names []string) []Path {
	var out []Path
	med := func(m [][]float64, a, b []int, same bool) float64 {
		var v []float64
		for _, i := range a {
			for _, j := range b {
				if (same && j <= i) || i >= len(m) || j >= len(m[i]) {
					continue
				}
				if x := m[i][j]; !math.IsNaN(x) && x > 0 {
					v = append(v, x)
				} else if x := m[j][i]; !math.IsNaN(x) && x > 0 {
					v = append(v, x)
				}
			}
		}
		if len(v) == 0 {
			return math.NaN()
		}
		sort.Float64s(v)
		return stat.Quantile(0.5, stat.Empirical, v, nil)
	}
	for i := range groups {
		for j := i; j < len(groups); j++ {
			r, b := med(rtt, groups[i], groups[j], i == j), med(bw, groups[i], groups[j], i == j)
			if math.IsNaN(r) || math.IsNaN(b) {
				continue
			}
			label := names[i] + " (inside)"
			if i != j {
				label = names[i] + " - " + names[j]
			}
			out = append(out, Path{Name: label, Bandwidth: b, RTT: r})
		}
	}
	return out
}
