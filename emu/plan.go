// Package emu builds the network of a platform file on this machine's own
// kernel: one network namespace per host (with its own host name, in a
// UTS namespace of its own), one namespace holding a Linux bridge per
// switch, veth pairs for host links and switch links, and per-direction
// rate limits (tbf) on every veth end, with netem delays where the kernel
// has netem. Commands then run on every rank inside its host's
// namespaces, over real kernel TCP.
//
// Planning (NewPlan) is pure: it computes every name, address, rate and
// command from the platform, so it is tested without root. Up executes a
// plan and records it under Options.StateDir, so that Load, Cluster.Run
// and Down work from another process; it removes what it built when a step
// fails. Down removes a cluster also after a crash or a half-built Up,
// from the names alone.
package emu

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/netip"
	"slices"
	"strconv"

	"netaware/platform"
)

// MaxPrefix bounds the prefix length: veth names are the prefix plus up to
// seven characters, and Linux interface names hold at most 15.
const MaxPrefix = 6

// Defaults of the traffic shaping; see docs/emu.md for the choices.
const (
	// DefaultBurst is the smallest tbf bucket of a link of at least
	// gsoBucketRate: one whole GSO packet (veth hands up to 64 KiB to the
	// qdisc at once), so that tbf need not cut large packets in software.
	DefaultBurst = 64 << 10
	// burstTime sizes the bucket: 0.2 ms of traffic. After an idle moment
	// a bucket's worth leaves at memory speed, which no link of a
	// platform file does: a 64 KiB bucket is 5 ms of a 100 Mbit link, and
	// 64 KiB messages crossed the trunks of docs/tuning.md's clusters as
	// if they were not there (docs/emu.md, docs/validation.md). Below
	// gsoBucketRate tbf cuts GSO packets into frames in software: one
	// 1 Gbit flow still reached 922 Mbit/s (iperf3; 948-955 with 125 KB).
	burstTime = 0.2e-3
	// gsoBucketRate is the rate (bytes/s, 1.3 Gbit/s) from which burstTime
	// of traffic is half a GSO packet: faster links keep a bucket of at
	// least DefaultBurst, and the timer granularity stays covered.
	gsoBucketRate = DefaultBurst / 2 / burstTime
	// minBurst is the smallest bucket: a few full-size frames.
	minBurst = 4 << 10
	// queueTime is how much traffic a link queues beyond its bucket, in
	// seconds at its rate (like a switch buffer); at least DefaultBurst.
	queueTime = 50e-3
)

// Options tune a plan.
type Options struct {
	// Prefix names everything the cluster creates (namespaces "PREFIX-...",
	// veths "PREFIX..."): 1 to MaxPrefix lowercase letters and digits,
	// starting with a letter.
	Prefix string
	// PerHost and Order override the platform's rank placement
	// (ranks.per_host and ranks.order); zero values keep the file's.
	PerHost int
	Order   string
	// Netem adds each link's latency with a netem qdisc (only where the
	// kernel has netem; Up detects it).
	Netem bool
	// Burst overrides the tbf bucket size in bytes (0: the default, 0.2 ms
	// at the link's rate, at least 4 KiB, and at least DefaultBurst from
	// 1.3 Gbit/s).
	Burst int64
	// StateDir holds the cluster's state file and UTS namespace files
	// (default /run/netaware-emu).
	StateDir string
	// Avoid lists the subnets of the clusters already up (Up fills it).
	// The prefix's hash picks one of 128 /16s, so two prefixes can meet
	// on one; 'emu rsh-agent' finds a host by its address in any cluster,
	// and an address in two clusters would name neither.
	Avoid []netip.Prefix
}

// DefaultStateDir is where clusters are recorded unless Options.StateDir says.
const DefaultStateDir = "/run/netaware-emu"

// Plan is everything a cluster consists of, and the commands that build it.
type Plan struct {
	Prefix   string        `json:"prefix"`
	Platform string        `json:"platform"` // platform name
	File     string        `json:"file"`     // platform file, or builtin:NAME
	Subnet   string        `json:"subnet"`   // the one L2 domain, e.g. 10.93.0.0/16
	Netem    bool          `json:"netem"`
	StateDir string        `json:"state_dir"`
	Hosts    []HostPlan    `json:"hosts"`
	Switches []SwitchPlan  `json:"switches"`
	Links    []LinkPlan    `json:"links"`
	Ranks    []int         `json:"ranks"` // rank -> index into Hosts
	Steps    [][]string    `json:"steps"` // commands, in order
	Warnings []string      `json:"warnings,omitempty"`
	Dropped  []DroppedLink `json:"dropped,omitempty"`
}

// HostPlan is one emulated host.
type HostPlan struct {
	Name      string `json:"name"` // the platform's host name, also its UTS host name
	Switch    string `json:"switch"`
	Namespace string `json:"namespace"` // network namespace (ip netns)
	UTS       string `json:"uts"`       // file holding its UTS namespace
	Address   string `json:"address"`   // IPv4 address of eth0
	Ranks     []int  `json:"ranks"`
}

// SwitchPlan is one emulated switch: a bridge "br0" in a namespace of its own.
type SwitchPlan struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// LinkPlan is one veth pair. A host link joins a host's eth0 (end A) to a
// port of its switch's bridge (end B); a switch link joins two bridges.
// Each end shapes what it sends: rate and delay apply per direction.
type LinkPlan struct {
	Kind       string  `json:"kind"` // "host" or "switch"
	A          string  `json:"a"`    // host or switch name
	B          string  `json:"b"`    // switch name
	NsA        string  `json:"ns_a"`
	DevA       string  `json:"dev_a"`
	NsB        string  `json:"ns_b"`
	DevB       string  `json:"dev_b"`
	RateBps    float64 `json:"rate_bps"` // bytes per second, each direction
	LatencyS   float64 `json:"latency_s"`
	HalfDuplex bool    `json:"half_duplex,omitempty"`
	Burst      int64   `json:"burst"` // tbf bucket, bytes
	Limit      int64   `json:"limit"` // tbf queue, bytes
}

// DroppedLink is a switch link no route uses, left out so that the bridges
// form a tree (a loop of bridges would flood frames forever).
type DroppedLink struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Line int    `json:"line"`
}

// ValidPrefix checks a cluster prefix.
func ValidPrefix(p string) error {
	if p == "" || len(p) > MaxPrefix {
		return fmt.Errorf("prefix %q: want 1 to %d characters", p, MaxPrefix)
	}
	for i, c := range p {
		switch {
		case c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return fmt.Errorf("prefix %q: want lowercase letters and digits, starting with a letter", p)
		}
	}
	return nil
}

// subnets is how many /16s clusters choose from: 10.64.0.0 to 10.191.0.0.
const subnets = 128

// Subnet is the /16 a prefix's cluster uses when no other cluster has it:
// 10.X.0.0/16 with X derived from the prefix.
func Subnet(prefix string) netip.Prefix {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return subnetAt(h.Sum32() % subnets)
}

func subnetAt(i uint32) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(64 + i%subnets), 0, 0}), 16)
}

// freeSubnet is the prefix's own subnet, or the next one (in order,
// wrapping) that none of avoid has.
func freeSubnet(prefix string, avoid []netip.Prefix) (netip.Prefix, error) {
	first := Subnet(prefix)
	start := uint32(first.Addr().As4()[1]) - 64
	for k := uint32(0); k < subnets; k++ {
		s := subnetAt(start + k)
		if !slices.Contains(avoid, s) {
			return s, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("prefix %s: every one of the %d subnets 10.64-191.0.0/16 is taken by another cluster ('netaware emu status')", prefix, subnets)
}

// maxEmuHosts is what one /16 holds (network and broadcast addresses excluded).
const maxEmuHosts = 1<<16 - 2

// maxHostName is the kernel's limit on a UTS host name.
const maxHostName = 64

// HostNamespace and SwitchNamespace name the namespaces of host i and
// switch i. They are index-based because platform names may hold
// characters a file name cannot ('/').
func HostNamespace(prefix string, i int) string   { return prefix + "-h" + strconv.Itoa(i) }
func SwitchNamespace(prefix string, i int) string { return prefix + "-s" + strconv.Itoa(i) }

// NewPlan computes the cluster of plat: names, addresses, rates, rank
// placement and the ip/tc commands that build it.
func NewPlan(plat *platform.Platform, opt Options) (*Plan, error) {
	if err := ValidPrefix(opt.Prefix); err != nil {
		return nil, err
	}
	if opt.Burst < 0 {
		return nil, fmt.Errorf("burst %d: must not be negative", opt.Burst)
	}
	if opt.PerHost != 0 || opt.Order != "" {
		perHost, order := plat.Placement()
		if opt.PerHost != 0 {
			perHost = opt.PerHost
		}
		if opt.Order != "" {
			order = opt.Order
		}
		q, err := plat.Place(perHost, order)
		if err != nil {
			return nil, fmt.Errorf("platform %s: %w", plat.Name, err)
		}
		plat = q
	}
	if opt.StateDir == "" {
		opt.StateDir = DefaultStateDir
	}
	P := opt.Prefix
	hosts := plat.Hosts()
	if len(hosts) > maxEmuHosts {
		return nil, fmt.Errorf("platform %s: %d hosts: one /16 holds at most %d", plat.Name, len(hosts), maxEmuHosts)
	}
	pl := &Plan{
		Prefix:   P,
		Platform: plat.Name,
		File:     plat.File,
		Netem:    opt.Netem,
		StateDir: opt.StateDir,
	}
	subnet, err := freeSubnet(P, opt.Avoid)
	if err != nil {
		return nil, err
	}
	pl.Subnet = subnet.String()
	base := subnet.Addr().As4()

	switches := plat.Switches()
	for i, s := range switches {
		pl.Switches = append(pl.Switches, SwitchPlan{Name: s, Namespace: SwitchNamespace(P, i)})
	}
	used, dropped, err := treeLinks(plat)
	if err != nil {
		return nil, err
	}
	pl.Dropped = dropped
	for _, d := range dropped {
		pl.Warnings = append(pl.Warnings, fmt.Sprintf("switch link %s-%s (line %d) carries no route: left out so that the bridges form a tree", d.A, d.B, d.Line))
	}

	for i, h := range hosts {
		if len(h.Name) > maxHostName {
			return nil, fmt.Errorf("host %s (line %d): a host name holds at most %d bytes", h.Name, h.Line, maxHostName)
		}
		n := uint32(i + 1)
		a := netip.AddrFrom4([4]byte{base[0], base[1], byte(n >> 8), byte(n)})
		sw, _ := plat.SwitchIndex(h.Switch)
		pl.Hosts = append(pl.Hosts, HostPlan{
			Name:      h.Name,
			Switch:    h.Switch,
			Namespace: HostNamespace(P, i),
			UTS:       opt.StateDir + "/" + P + "/uts/h" + strconv.Itoa(i),
			Address:   a.String(),
			Ranks:     plat.HostRanks(i),
		})
		pl.Links = append(pl.Links, shapeLink(LinkPlan{
			Kind: "host", A: h.Name, B: h.Switch,
			NsA: HostNamespace(P, i), DevA: "eth0",
			NsB: SwitchNamespace(P, sw), DevB: P + "p" + strconv.Itoa(i),
			RateBps: h.Link.BandwidthBps, LatencyS: h.Link.LatencyS, HalfDuplex: h.Link.HalfDuplex,
		}, opt.Burst))
	}
	for li, l := range plat.Links() {
		if !used[li] {
			continue
		}
		a, _ := plat.SwitchIndex(l.A)
		b, _ := plat.SwitchIndex(l.B)
		pl.Links = append(pl.Links, shapeLink(LinkPlan{
			Kind: "switch", A: l.A, B: l.B,
			NsA: SwitchNamespace(P, a), DevA: P + "t" + strconv.Itoa(li) + "a",
			NsB: SwitchNamespace(P, b), DevB: P + "t" + strconv.Itoa(li) + "b",
			RateBps: l.BandwidthBps, LatencyS: l.LatencyS, HalfDuplex: l.HalfDuplex,
		}, opt.Burst))
	}
	for _, l := range pl.Links {
		if l.HalfDuplex {
			pl.Warnings = append(pl.Warnings, fmt.Sprintf("link %s-%s is half duplex: emulated as full duplex at its rate in each direction (a veth has no shared capacity)", l.A, l.B))
		}
	}
	for r := range plat.NumRanks() {
		pl.Ranks = append(pl.Ranks, plat.RankHost(r))
	}
	pl.Steps = pl.commands()
	return pl, nil
}

// shapeLink fills in the tbf bucket and queue of a link.
func shapeLink(l LinkPlan, burst int64) LinkPlan {
	if burst == 0 {
		burst = max(minBurst, int64(math.Ceil(l.RateBps*burstTime)))
		if l.RateBps >= gsoBucketRate {
			burst = max(DefaultBurst, burst)
		}
	}
	l.Burst = burst
	l.Limit = burst + max(DefaultBurst, int64(math.Ceil(l.RateBps*queueTime)))
	return l
}

// treeLinks keeps the switch links that some route between two switches
// crosses. Where those still close a loop the platform cannot be bridged
// (Linux bridges without STP would flood a loop forever, and STP would
// route differently from the platform), so that is an error.
func treeLinks(plat *platform.Platform) (used []bool, dropped []DroppedLink, err error) {
	links := plat.Links()
	used = make([]bool, len(links))
	n := len(plat.Switches())
	for a := range n {
		for b := a + 1; b < n; b++ {
			ls, _ := plat.SwitchPath(a, b)
			for _, l := range ls {
				used[l] = true
			}
		}
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for li, l := range links {
		if !used[li] {
			dropped = append(dropped, DroppedLink{A: l.A, B: l.B, Line: l.Line})
			continue
		}
		a, _ := plat.SwitchIndex(l.A)
		b, _ := plat.SwitchIndex(l.B)
		ra, rb := find(a), find(b)
		if ra == rb {
			return nil, nil, fmt.Errorf("platform %s: switch link %s-%s (line %d) closes a loop of links that routes use; "+
				"bridges can only emulate a tree of switches", plat.Name, l.A, l.B, l.Line)
		}
		parent[ra] = rb
	}
	return used, dropped, nil
}

// commands lists the ip/tc/unshare commands that build the plan, in order:
// switches, then hosts with their links, then switch links. Every command
// names its namespace, so nothing is ever created in the caller's.
func (pl *Plan) commands() [][]string {
	var out [][]string
	add := func(argv ...string) { out = append(out, argv) }
	for _, s := range pl.Switches {
		add("ip", "netns", "add", s.Namespace)
		add("ip", "-n", s.Namespace, "link", "set", "lo", "up")
		// Without STP a bridge forwards on a new port at once; a tree of
		// bridges has no loop to break.
		add("ip", "-n", s.Namespace, "link", "add", "br0", "type", "bridge", "stp_state", "0")
		add("ip", "-n", s.Namespace, "link", "set", "br0", "up")
	}
	bits := pl.prefixBits()
	for i, h := range pl.Hosts {
		l := pl.Links[i]
		add("ip", "netns", "add", h.Namespace)
		add("ip", "-n", h.Namespace, "link", "set", "lo", "up")
		add("unshare", "--uts="+h.UTS, "hostname", h.Name)
		add("ip", "link", "add", l.DevA, "netns", l.NsA, "type", "veth", "peer", "name", l.DevB, "netns", l.NsB)
		add("ip", "-n", h.Namespace, "addr", "add", h.Address+"/"+bits, "dev", "eth0")
		add("ip", "-n", h.Namespace, "link", "set", "eth0", "up")
		add("ip", "-n", l.NsB, "link", "set", l.DevB, "master", "br0", "up")
		out = append(out, pl.shape(l.NsA, l.DevA, l)...)
		out = append(out, pl.shape(l.NsB, l.DevB, l)...)
	}
	for _, l := range pl.Links[len(pl.Hosts):] {
		add("ip", "link", "add", l.DevA, "netns", l.NsA, "type", "veth", "peer", "name", l.DevB, "netns", l.NsB)
		add("ip", "-n", l.NsA, "link", "set", l.DevA, "master", "br0", "up")
		add("ip", "-n", l.NsB, "link", "set", l.DevB, "master", "br0", "up")
		out = append(out, pl.shape(l.NsA, l.DevA, l)...)
		out = append(out, pl.shape(l.NsB, l.DevB, l)...)
	}
	return out
}

func (pl *Plan) prefixBits() string {
	p, err := netip.ParsePrefix(pl.Subnet)
	if err != nil {
		return "16"
	}
	return strconv.Itoa(p.Bits())
}

// shape is the egress qdisc of one veth end: tbf at the link's rate, under
// a netem delay of the link's latency when netem is on.
func (pl *Plan) shape(ns, dev string, l LinkPlan) [][]string {
	tbf := []string{"tbf", "rate", strconv.FormatInt(int64(math.Round(l.RateBps*8)), 10) + "bit",
		"burst", strconv.FormatInt(l.Burst, 10), "limit", strconv.FormatInt(l.Limit, 10)}
	if !pl.Netem || l.LatencyS <= 0 {
		return [][]string{append([]string{"tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:"}, tbf...)}
	}
	delay := strconv.FormatFloat(l.LatencyS*1e6, 'f', -1, 64) + "us"
	return [][]string{
		{"tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "netem", "delay", delay, "limit", "100000"},
		append([]string{"tc", "-n", ns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "2:"}, tbf...),
	}
}

// HostIndex finds a host by its name or address.
func (pl *Plan) HostIndex(nameOrAddr string) (int, error) {
	for i, h := range pl.Hosts {
		if h.Name == nameOrAddr || h.Address == nameOrAddr {
			return i, nil
		}
	}
	return -1, fmt.Errorf("cluster %s has no host %q", pl.Prefix, nameOrAddr)
}
