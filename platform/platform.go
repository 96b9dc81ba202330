// Package platform reads, validates and serves the platform files of
// docs/platform-format.md: the network a simulation runs on (hosts with sockets and cores,
// switches, links, rank placement, noise, TCP behaviour) and the ground-truth
// levels that discovery is judged against. It also embeds the built-in
// platforms reconstructed from the seed papers.
package platform

import (
	"fmt"
	"sync"
)

// Resource is one capacity that flows share: one direction of a full-duplex
// link, both directions of a half-duplex link, a host's NIC direction, or a
// host's intra-socket / inter-socket memory path.
type Resource struct {
	Name         string
	BandwidthBps float64 // bytes per second
}

// Route is what a message from one rank to another crosses.
type Route struct {
	LatencyS float64 // one-way latency in seconds: sum of the hops' latencies
	Forward  []int   // indices into Resources() loaded by the data, in path order
	Reverse  []int   // resources of the reverse path (ACK direction), loaded with the crosstraffic weight
	Hops     int     // number of links crossed (0 between ranks of one host)
}

// Overhead is the CPU time a host spends per message, in seconds.
type Overhead struct{ SendS, RecvS, SendPerByteS, RecvPerByteS float64 }

// NoiseSpec is the platform's measurement noise: relative standard deviations
// of each message's latency and bandwidth, drawn from a generator seeded by Seed,
// or a named profile.
type NoiseSpec struct {
	Seed            int64
	LatencyJitter   float64
	BandwidthJitter float64
	// Profile names a noise model fitted to real measurements instead of
	// the two relative jitters: NoiseRealistic is a kernel TCP stack on
	// busy cores (additive latency in absolute time with heavy-tailed
	// wake-up delays and slow spells, bandwidth variability); its
	// parameters live in package netsim.
	Profile string
}

// Noise profiles.
const (
	NoiseRealistic = "realistic"
)

// Quiet reports whether the spec adds no noise at all.
func (n NoiseSpec) Quiet() bool {
	return n.Profile == "" && n.LatencyJitter == 0 && n.BandwidthJitter == 0
}

// ParseNoiseProfile checks a noise profile name ("" is none).
func ParseNoiseProfile(s string) (string, error) {
	switch s {
	case "", NoiseRealistic:
		return s, nil
	}
	return "", fmt.Errorf("noise profile %q: want %q", s, NoiseRealistic)
}

// TCPSpec is the TCP behaviour the simulator imitates.
type TCPSpec struct {
	CrossTraffic float64 // weight a flow puts on its reverse path
	WindowBytes  int64   // rate <= window / (2 * path latency); 0 = no bound
	// QueueS is how much traffic, in seconds at a link's rate, the FIFO
	// buffer in front of each link holds (a switch's port buffer, or the
	// tbf queue of 'netaware emu'); TCP flows that saturate a link keep it
	// full, so a message crossing that link waits behind their bytes.
	// 0: no queueing delay (shares only).
	QueueS float64
	// SendBufferBytes is the socket send buffer: an MPI send over TCP
	// completes once its last byte is written into it, not when the bytes
	// arrive, so a rendezvous send of at most this many bytes completes
	// when its data starts. 0: sends complete on arrival.
	SendBufferBytes int64
	// RTTSharing shares a bottleneck in inverse proportion to each flow's
	// route latency, as TCP flows share by their round trips (SimGrid's
	// CM02), instead of equally (tcp.sharing: rtt; default maxmin).
	RTTSharing bool
}

// The spellings of tcp.sharing.
const (
	SharingMaxMin = "maxmin"
	SharingRTT    = "rtt"
)

// Sharing is tcp.sharing as the file spells it.
func (t TCPSpec) Sharing() string {
	if t.RTTSharing {
		return SharingRTT
	}
	return SharingMaxMin
}

// DefaultCrossTraffic is the reverse-path weight used when a file does not
// state one (SimGrid's default for TCP flows).
const DefaultCrossTraffic = 0.05

// Level is a partition of the ranks: groups of ranks, each sorted, groups
// sorted by first rank.
type Level struct {
	Name   string
	Groups [][]int
}

// Rank placement orders.
const (
	OrderBlock  = "block"
	OrderCyclic = "cyclic"
)

// PerHostCores asks for one rank per core of each host ("per_host: cores").
const PerHostCores = -1

// LinkSpec is a bandwidth and latency, with its duplex mode.
type LinkSpec struct {
	BandwidthBps float64 // bytes per second, per direction when full duplex
	LatencyS     float64
	HalfDuplex   bool
}

// HostType describes a kind of node.
type HostType struct {
	Name           string
	Sockets        int
	CoresPerSocket int
	IntraSocket    *LinkSpec // core to core on one socket; nil if not stated
	InterSocket    *LinkSpec // across sockets of one host; nil if not stated
	Overhead       Overhead
	Line           int // line in the file, for messages
}

// Cores is the host type's total core count.
func (t *HostType) Cores() int { return t.Sockets * t.CoresPerSocket }

// Host is one node attached to one switch.
type Host struct {
	Name   string
	Switch string
	Type   *HostType
	Link   LinkSpec // the host's link to its switch
	Line   int

	sw int // index into switches
}

// Link is a switch-to-switch link.
type Link struct {
	A, B string
	LinkSpec
	Line int

	a, b int // switch indices
}

// rankPlace is where one rank runs.
type rankPlace struct {
	host, socket, core int
}

// truthSpec is a `truth:` level as written, with groups as host indices.
type truthSpec struct {
	name   string
	groups [][]int
	line   int
}

// Platform is a validated platform with a rank placement. It is immutable
// after construction and safe for concurrent use.
type Platform struct {
	Name        string
	Description string
	File        string // file name given to Parse, or "builtin:NAME"

	switches  []string
	links     []Link
	hosts     []Host
	types     []*HostType
	perHost   int
	order     string
	noise     NoiseSpec
	tcp       TCPSpec
	truthSpec []truthSpec

	swIndex   map[string]int
	hostIndex map[string]int
	adj       [][]adjEdge // per switch, links leaving it

	resources []Resource
	hostUp    []int   // per host, resource loaded by traffic leaving the host
	hostDown  []int   // per host, resource loaded by traffic entering the host
	linkAB    []int   // per link, resource loaded by traffic from A to B
	linkBA    []int   // per link, resource loaded by traffic from B to A
	socketRes [][]int // per host, per socket: intra-socket resource (-1 if none)
	interRes  []int   // per host: inter-socket resource (-1 if none)

	ranks     []rankPlace
	hostRanks [][]int

	routes *routeCache // shared between copies: routing does not depend on ranks
}

type adjEdge struct{ to, link int }

// NumRanks is the number of ranks the placement puts on the platform.
func (p *Platform) NumRanks() int { return len(p.ranks) }

// Resources lists every shared capacity; Route refers to it by index. The
// slice must not be modified.
func (p *Platform) Resources() []Resource { return p.resources }

// Switches lists the switch names in file order.
func (p *Platform) Switches() []string { return p.switches }

// Links lists the switch-to-switch links in file order.
func (p *Platform) Links() []Link { return p.links }

// Hosts lists the hosts in file order (expanded from name ranges).
func (p *Platform) Hosts() []Host { return p.hosts }

// HostTypes lists the host types in file order.
func (p *Platform) HostTypes() []*HostType { return p.types }

// Placement returns ranks.per_host (PerHostCores for "cores") and ranks.order.
func (p *Platform) Placement() (perHost int, order string) { return p.perHost, p.order }

// HostRanks returns the ranks placed on host h (index into Hosts()).
func (p *Platform) HostRanks(h int) []int { return p.hostRanks[h] }

// RankHost returns the index into Hosts() of the host running rank.
func (p *Platform) RankHost(rank int) int { return p.ranks[rank].host }

// Overhead is the per-message CPU cost of the host running rank.
func (p *Platform) Overhead(rank int) Overhead {
	return p.hosts[p.ranks[rank].host].Type.Overhead
}

// RankIdentity tells where rank runs: its host's name, its socket, and its
// core numbered within the host (socket 0's cores first).
func (p *Platform) RankIdentity(rank int) (host string, socket, core int) {
	r := p.ranks[rank]
	return p.hosts[r.host].Name, r.socket, r.core
}

// Noise is the platform's noise specification.
func (p *Platform) Noise() NoiseSpec { return p.noise }

// TCP is the platform's TCP specification.
func (p *Platform) TCP() TCPSpec { return p.tcp }

// WithoutNoise returns a copy of the platform with noise switched off (the
// seed is kept).
func (p *Platform) WithoutNoise() *Platform {
	q := *p
	q.noise.LatencyJitter, q.noise.BandwidthJitter, q.noise.Profile = 0, 0, ""
	return &q
}

// WithNoise returns a copy of the platform with the given noise.
func (p *Platform) WithNoise(n NoiseSpec) *Platform {
	q := *p
	q.noise = n
	return &q
}

// Place returns a copy of the platform with a different rank placement:
// perHost ranks on every host (PerHostCores for one per core) in the given
// order (OrderBlock or OrderCyclic). It fails when a host has fewer cores
// than perHost, or when ranks would share a socket (or a host) whose host
// type states no intra_socket (inter_socket) path.
func (p *Platform) Place(perHost int, order string) (*Platform, error) {
	q := *p
	if err := q.place(perHost, order); err != nil {
		return nil, err
	}
	return &q, nil
}

// WithRanks is Place for arguments the program controls; it panics on an
// invalid placement. Use Place for placements that come from users.
func (p *Platform) WithRanks(perHost int, order string) *Platform {
	q, err := p.Place(perHost, order)
	if err != nil {
		panic(fmt.Sprintf("platform %s: WithRanks: %v", p.Name, err))
	}
	return q
}

// place assigns ranks to hosts, sockets and cores; see docs/platform-format.md "Rules".
func (p *Platform) place(perHost int, order string) error {
	if order != OrderBlock && order != OrderCyclic {
		return fmt.Errorf("ranks.order %q: want block or cyclic", order)
	}
	if perHost < 1 && perHost != PerHostCores {
		return fmt.Errorf("ranks.per_host %d: want a positive count or \"cores\"", perHost)
	}
	counts := make([]int, len(p.hosts))
	total := 0
	for h, host := range p.hosts {
		n := perHost
		if perHost == PerHostCores {
			n = host.Type.Cores()
		}
		if n > host.Type.Cores() {
			return fmt.Errorf("ranks.per_host %d: host %s (type %s) has only %d cores", n, host.Name, host.Type.Name, host.Type.Cores())
		}
		if n > 1 && host.Type.CoresPerSocket > 1 && host.Type.IntraSocket == nil {
			return fmt.Errorf("host type %s (line %d): %d ranks per host share a socket but intra_socket is not set", host.Type.Name, host.Type.Line, n)
		}
		if n > host.Type.CoresPerSocket && host.Type.InterSocket == nil {
			return fmt.Errorf("host type %s (line %d): %d ranks per host span sockets but inter_socket is not set", host.Type.Name, host.Type.Line, n)
		}
		counts[h] = n
		total += n
		if total > MaxRanks {
			return fmt.Errorf("more than %d ranks", MaxRanks)
		}
	}
	var ranks []rankPlace
	hostRanks := make([][]int, len(p.hosts))
	add := func(h int) {
		slot := len(hostRanks[h])
		t := p.hosts[h].Type
		hostRanks[h] = append(hostRanks[h], len(ranks))
		ranks = append(ranks, rankPlace{host: h, socket: slot / t.CoresPerSocket, core: slot})
	}
	if order == OrderBlock {
		for h := range p.hosts {
			for range counts[h] {
				add(h)
			}
		}
	} else {
		// Round-robin over the hosts that still have free slots; with equal
		// counts this gives rank r to host r mod H.
		for round := 0; ; round++ {
			placed := false
			for h := range p.hosts {
				if round < counts[h] {
					add(h)
					placed = true
				}
			}
			if !placed {
				break
			}
		}
	}
	p.perHost, p.order, p.ranks, p.hostRanks = perHost, order, ranks, hostRanks
	return nil
}

// Route is what a message from rank src to rank dst crosses. src must differ
// from dst; the returned slices are fresh and belong to the caller.
func (p *Platform) Route(src, dst int) Route {
	a, b := p.ranks[src], p.ranks[dst]
	if a.host == b.host {
		if src == dst {
			return Route{}
		}
		t := p.hosts[a.host].Type
		if a.socket == b.socket {
			r := p.socketRes[a.host][a.socket]
			return Route{LatencyS: t.IntraSocket.LatencyS, Forward: []int{r}, Reverse: []int{}}
		}
		r := p.interRes[a.host]
		return Route{LatencyS: t.InterSocket.LatencyS, Forward: []int{r}, Reverse: []int{}}
	}
	return p.HostRoute(a.host, b.host)
}

// HostRoute is the network route between two different hosts (indices into
// Hosts()): the source host link out, the switch path, the destination host
// link in.
func (p *Platform) HostRoute(src, dst int) Route {
	hs, hd := &p.hosts[src], &p.hosts[dst]
	sp := p.routes.path(p, hs.sw, hd.sw)
	fwd := make([]int, 0, len(sp.fwd)+2)
	fwd = append(fwd, p.hostUp[src])
	fwd = append(fwd, sp.fwd...)
	fwd = append(fwd, p.hostDown[dst])
	rev := make([]int, 0, len(sp.rev)+2)
	rev = append(rev, p.hostUp[dst])
	rev = append(rev, sp.rev...)
	rev = append(rev, p.hostDown[src])
	return Route{
		LatencyS: hs.Link.LatencyS + sp.latencyS + hd.Link.LatencyS,
		Forward:  fwd,
		Reverse:  rev,
		Hops:     len(sp.links) + 2,
	}
}

// SwitchPath returns the links (indices into Links()) a message from switch
// a to switch b crosses, in order, and the switches visited including both
// ends.
func (p *Platform) SwitchPath(a, b int) (links, switches []int) {
	sp := p.routes.path(p, a, b)
	return append([]int(nil), sp.links...), append([]int(nil), sp.nodes...)
}

// SwitchIndex returns the index of a switch by name.
func (p *Platform) SwitchIndex(name string) (int, bool) {
	i, ok := p.swIndex[name]
	return i, ok
}

// routeCache holds switch-to-switch routes, computed lazily one source
// switch at a time so that large platforms never pay for all pairs.
type routeCache struct {
	mu    sync.Mutex
	trees map[int]*spTree
	paths map[[2]int]*switchPath
}

type switchPath struct {
	latencyS float64
	links    []int // link indices in path order
	nodes    []int // switches visited, both ends included
	fwd, rev []int // resource indices, forward in path order, reverse in reverse-path order
}
