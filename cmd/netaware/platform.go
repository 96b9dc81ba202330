package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/internal/atomicfile"
	"netaware/platform"
	"netaware/topo"
)

func init() { register(newPlatformCmd) }

func newPlatformCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "platform",
		Short: "List, inspect, validate and export simulated platforms",
		Long: `A platform describes a network for the simulator (hosts with sockets and
cores, switches, links, rank placement, noise, TCP behaviour) and the ground
truth that discovery is judged against. Platforms are YAML files in the format
of docs/platforms.md, or built-in names.

Examples:
  netaware platform list
  netaware platform show zhu-2racks
  netaware platform validate mygrid.yaml other.yaml
  netaware platform truth fram-like --json > truth.json
  netaware platform export --simgrid dichev-n1 -o dichev-n1.xml`,
	}
	cmd.AddCommand(newPlatformListCmd(), newPlatformShowCmd(), newPlatformValidateCmd(),
		newPlatformTruthCmd(), newPlatformExportCmd())
	return cmd
}

func newPlatformListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in platforms",
		Long: `List prints the built-in platforms with a one-line description each. Every
built-in cites, in its header comment ('netaware platform show NAME --source'),
the seed paper section each number comes from.

Example:
  netaware platform list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bs := platform.Builtins()
			if asJSON {
				type entry struct {
					Name        string `json:"name"`
					Description string `json:"description"`
				}
				var out []entry
				for _, b := range bs {
					out = append(out, entry{b.Name, b.Description})
				}
				return platformJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, b := range bs {
				fmt.Fprintf(tw, "%s\t%s\n", b.Name, b.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// platformPlacementFlags lets show and truth look at another rank placement.
type platformPlacementFlags struct {
	perHost string
	order   string
}

func addPlatformPlacementFlags(cmd *cobra.Command) *platformPlacementFlags {
	f := &platformPlacementFlags{}
	cmd.Flags().StringVar(&f.perHost, "per-host", "", `ranks per host: a number or "cores" (default: the file's ranks.per_host)`)
	cmd.Flags().StringVar(&f.order, "order", "", "rank order: block or cyclic (default: the file's ranks.order)")
	return f
}

func (f *platformPlacementFlags) apply(p *platform.Platform) (*platform.Platform, error) {
	if f.perHost == "" && f.order == "" {
		return p, nil
	}
	perHost, order := p.Placement()
	if f.perHost == "cores" {
		perHost = platform.PerHostCores
	} else if f.perHost != "" {
		n, err := strconv.Atoi(f.perHost)
		if err != nil || n < 1 {
			return nil, usagef("--per-host %q: want a positive number or \"cores\"", f.perHost)
		}
		perHost = n
	}
	if f.order != "" {
		if f.order != platform.OrderBlock && f.order != platform.OrderCyclic {
			return nil, usagef("--order %q: want block or cyclic", f.order)
		}
		order = f.order
	}
	q, err := p.Place(perHost, order)
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", p.Name, err)
	}
	return q, nil
}

func newPlatformShowCmd() *cobra.Command {
	var source, asJSON bool
	var pf *platformPlacementFlags
	cmd := &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Summarise a platform: hosts, switches, links, ranks, routes",
		Long: `Show prints a readable summary of a platform: its switches and links, its
hosts grouped by switch and host type, the rank placement, noise and TCP
settings, a summary of the routes between hosts (latency, hops, bottleneck
bandwidth) and the ground-truth levels.

With --source it prints the platform file itself (for built-ins, the YAML
with its header comment citing where every number comes from).

Examples:
  netaware platform show graphene
  netaware platform show fram-like --per-host 4 --order cyclic
  netaware platform show zhu-2racks --source > my-racks.yaml
  netaware platform show dichev-n1 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if source {
				data, err := platform.Source(args[0])
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			p, err := platform.Load(args[0])
			if err != nil {
				return err
			}
			if p, err = pf.apply(p); err != nil {
				return err
			}
			if asJSON {
				return platformJSON(cmd.OutOrStdout(), summarizePlatform(p))
			}
			return platformShow(cmd.OutOrStdout(), p)
		},
	}
	cmd.Flags().BoolVar(&source, "source", false, "print the platform file instead of a summary")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON (times in seconds, bandwidths in bytes per second)")
	pf = addPlatformPlacementFlags(cmd)
	return cmd
}

func platformShow(w io.Writer, p *platform.Platform) error {
	fmt.Fprintf(w, "platform %s (%s)\n", p.Name, p.File)
	if p.Description != "" {
		fmt.Fprintf(w, "  %s\n", p.Description)
	}
	hosts := p.Hosts()
	perHost, order := p.Placement()
	ph := strconv.Itoa(perHost)
	if perHost == platform.PerHostCores {
		ph = "cores"
	}
	fmt.Fprintf(w, "\n%d hosts, %d switches, %d switch links, %d ranks (per_host %s, order %s), %d shared resources\n",
		len(hosts), len(p.Switches()), len(p.Links()), p.NumRanks(), ph, order, len(p.Resources()))

	fmt.Fprintf(w, "\nhost types:\n")
	for _, t := range p.HostTypes() {
		fmt.Fprintf(w, "  %-12s %d socket(s) x %d core(s)", t.Name, t.Sockets, t.CoresPerSocket)
		if t.IntraSocket != nil {
			fmt.Fprintf(w, ", intra-socket %s %s", platform.FormatByteRate(t.IntraSocket.BandwidthBps), platform.FormatTime(t.IntraSocket.LatencyS))
		}
		if t.InterSocket != nil {
			fmt.Fprintf(w, ", inter-socket %s %s", platform.FormatByteRate(t.InterSocket.BandwidthBps), platform.FormatTime(t.InterSocket.LatencyS))
		}
		o := t.Overhead
		if o != (platform.Overhead{}) {
			fmt.Fprintf(w, ", overhead send %s recv %s", platform.FormatTime(o.SendS), platform.FormatTime(o.RecvS))
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\nhosts by switch:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range platformHostRuns(hosts) {
		h := r[0]
		fmt.Fprintf(tw, "  %s\t%d host(s) %s..%s\ttype %s\tlink %s %s%s\n", h.Switch, len(r), h.Name, r[len(r)-1].Name,
			h.Type.Name, platform.FormatBandwidth(h.Link.BandwidthBps), platform.FormatTime(h.Link.LatencyS), platformDuplexNote(h.Link))
	}
	tw.Flush()

	if len(p.Links()) > 0 {
		fmt.Fprintf(w, "\nswitch links:\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, l := range p.Links() {
			fmt.Fprintf(tw, "  %s - %s\t%s\t%s%s\n", l.A, l.B, platform.FormatBandwidth(l.BandwidthBps), platform.FormatTime(l.LatencyS), platformDuplexNote(l.LinkSpec))
		}
		tw.Flush()
	}

	n, tcp := p.Noise(), p.TCP()
	if n.Profile != "" {
		fmt.Fprintf(w, "\nnoise: seed %d, profile %s\n", n.Seed, n.Profile)
	} else {
		fmt.Fprintf(w, "\nnoise: seed %d, latency jitter %g, bandwidth jitter %g\n", n.Seed, n.LatencyJitter, n.BandwidthJitter)
	}
	window := "no window bound"
	if tcp.WindowBytes > 0 {
		window = fmt.Sprintf("window %d bytes", tcp.WindowBytes)
	}
	fmt.Fprintf(w, "tcp: crosstraffic %g, %s\n", tcp.CrossTraffic, window)

	rs := platformRouteSummary(p)
	fmt.Fprintf(w, "\nroutes between hosts (%s):\n", rs.scope)
	fmt.Fprintf(w, "  one-way latency  min %s  median %s  max %s\n", platform.FormatTime(rs.lat[0]), platform.FormatTime(rs.lat[1]), platform.FormatTime(rs.lat[2]))
	fmt.Fprintf(w, "  links crossed    min %d  max %d\n", rs.hopsMin, rs.hopsMax)
	fmt.Fprintf(w, "  bottleneck       min %s  max %s\n", platform.FormatBandwidth(rs.bwMin), platform.FormatBandwidth(rs.bwMax))

	fmt.Fprintf(w, "\nground truth:\n")
	platformWriteLevels(w, p.Truth())
	return nil
}

// platformHostRuns cuts the hosts into runs of consecutive hosts on one
// switch with one type and one link.
func platformHostRuns(hosts []platform.Host) [][]platform.Host {
	var runs [][]platform.Host
	for i := 0; i < len(hosts); {
		j := i
		for j < len(hosts) && hosts[j].Switch == hosts[i].Switch && hosts[j].Type == hosts[i].Type && hosts[j].Link == hosts[i].Link {
			j++
		}
		runs = append(runs, hosts[i:j])
		i = j
	}
	return runs
}

// platformSummary is 'platform show --json': what the text summary says,
// times in seconds and bandwidths in bytes per second.
type platformSummary struct {
	Name        string               `json:"name"`
	File        string               `json:"file"`
	Description string               `json:"description,omitempty"`
	Hosts       int                  `json:"hosts"`
	Switches    int                  `json:"switches"`
	Ranks       int                  `json:"ranks"`
	PerHost     string               `json:"per_host"`
	Order       string               `json:"order"`
	Resources   int                  `json:"shared_resources"`
	HostTypes   []platformHostType   `json:"host_types"`
	HostGroups  []platformHostGroup  `json:"hosts_by_switch"`
	SwitchLinks []platformSwitchLink `json:"switch_links"`
	Noise       struct {
		Seed            int64   `json:"seed"`
		LatencyJitter   float64 `json:"latency_jitter"`
		BandwidthJitter float64 `json:"bandwidth_jitter"`
		Profile         string  `json:"profile,omitempty"`
	} `json:"noise"`
	TCP struct {
		CrossTraffic float64 `json:"crosstraffic"`
		WindowBytes  int64   `json:"window_bytes,omitempty"`
	} `json:"tcp"`
	Routes struct {
		Scope          string  `json:"scope"`
		LatencyMinS    float64 `json:"latency_min_s"`
		LatencyMedianS float64 `json:"latency_median_s"`
		LatencyMaxS    float64 `json:"latency_max_s"`
		HopsMin        int     `json:"hops_min"`
		HopsMax        int     `json:"hops_max"`
		BottleneckMin  float64 `json:"bottleneck_min_Bps"`
		BottleneckMax  float64 `json:"bottleneck_max_Bps"`
	} `json:"routes"`
	Truth []platformTruthLevel `json:"truth"`
}

type platformLink struct {
	BandwidthBps float64 `json:"bandwidth_Bps"`
	LatencyS     float64 `json:"latency_s"`
	HalfDuplex   bool    `json:"half_duplex,omitempty"`
}

type platformHostType struct {
	Name           string        `json:"name"`
	Sockets        int           `json:"sockets"`
	CoresPerSocket int           `json:"cores_per_socket"`
	IntraSocket    *platformLink `json:"intra_socket,omitempty"`
	InterSocket    *platformLink `json:"inter_socket,omitempty"`
	OverheadSendS  float64       `json:"overhead_send_s,omitempty"`
	OverheadRecvS  float64       `json:"overhead_recv_s,omitempty"`
}

type platformHostGroup struct {
	Switch string       `json:"switch"`
	Count  int          `json:"count"`
	First  string       `json:"first"`
	Last   string       `json:"last"`
	Type   string       `json:"type"`
	Link   platformLink `json:"link"`
}

type platformSwitchLink struct {
	A    string       `json:"a"`
	B    string       `json:"b"`
	Link platformLink `json:"link"`
}

type platformTruthLevel struct {
	Name   string `json:"name"`
	Groups int    `json:"groups"`
	Sizes  string `json:"sizes"` // "4x16, 1x5": count x size
}

func toPlatformLink(l *platform.LinkSpec) *platformLink {
	if l == nil {
		return nil
	}
	return &platformLink{l.BandwidthBps, l.LatencyS, l.HalfDuplex}
}

func summarizePlatform(p *platform.Platform) platformSummary {
	hosts := p.Hosts()
	perHost, order := p.Placement()
	s := platformSummary{Name: p.Name, File: p.File, Description: p.Description, Hosts: len(hosts), Switches: len(p.Switches()),
		Ranks: p.NumRanks(), PerHost: strconv.Itoa(perHost), Order: order, Resources: len(p.Resources())}
	n := p.Noise()
	s.Noise.Seed, s.Noise.LatencyJitter, s.Noise.BandwidthJitter, s.Noise.Profile = n.Seed, n.LatencyJitter, n.BandwidthJitter, n.Profile
	if perHost == platform.PerHostCores {
		s.PerHost = "cores"
	}
	for _, t := range p.HostTypes() {
		s.HostTypes = append(s.HostTypes, platformHostType{Name: t.Name, Sockets: t.Sockets, CoresPerSocket: t.CoresPerSocket,
			IntraSocket: toPlatformLink(t.IntraSocket), InterSocket: toPlatformLink(t.InterSocket),
			OverheadSendS: t.Overhead.SendS, OverheadRecvS: t.Overhead.RecvS})
	}
	for _, r := range platformHostRuns(hosts) {
		h := r[0]
		s.HostGroups = append(s.HostGroups, platformHostGroup{h.Switch, len(r), h.Name, r[len(r)-1].Name, h.Type.Name, *toPlatformLink(&h.Link)})
	}
	for _, l := range p.Links() {
		s.SwitchLinks = append(s.SwitchLinks, platformSwitchLink{l.A, l.B, *toPlatformLink(&l.LinkSpec)})
	}
	tcp := p.TCP()
	s.TCP.CrossTraffic, s.TCP.WindowBytes = tcp.CrossTraffic, tcp.WindowBytes
	rs := platformRouteSummary(p)
	r := &s.Routes
	r.Scope, r.LatencyMinS, r.LatencyMedianS, r.LatencyMaxS = rs.scope, rs.lat[0], rs.lat[1], rs.lat[2]
	r.HopsMin, r.HopsMax, r.BottleneckMin, r.BottleneckMax = rs.hopsMin, rs.hopsMax, rs.bwMin, rs.bwMax
	for _, l := range p.Truth() {
		s.Truth = append(s.Truth, platformTruthLevel{l.Name, len(l.Groups), platformGroupSizes(l.Groups)})
	}
	return s
}

func platformDuplexNote(l platform.LinkSpec) string {
	if l.HalfDuplex {
		return " half duplex"
	}
	return ""
}

type platformRouteStats struct {
	scope            string
	lat              [3]float64 // min, median, max
	hopsMin, hopsMax int
	bwMin, bwMax     float64
}

// platformRouteSummary looks at every host pair, or at a deterministic sample of
// pairs on large platforms.
func platformRouteSummary(p *platform.Platform) platformRouteStats {
	h := len(p.Hosts())
	st := platformRouteStats{hopsMin: math.MaxInt, bwMin: math.Inf(1)}
	if h < 2 {
		st.scope = "none: one host"
		st.hopsMin, st.bwMin = 0, 0
		return st
	}
	const maxPairs = 200000
	stride := 1
	if total := h * (h - 1) / 2; total > maxPairs {
		stride = total/maxPairs + 1
		st.scope = fmt.Sprintf("every %dth of %d host pairs", stride, total)
	} else {
		st.scope = fmt.Sprintf("all %d host pairs", total)
	}
	var lats []float64
	k := 0
	for a := 0; a < h; a++ {
		for b := a + 1; b < h; b++ {
			k++
			if k%stride != 0 {
				continue
			}
			r := p.HostRoute(a, b)
			lats = append(lats, r.LatencyS)
			st.hopsMin, st.hopsMax = min(st.hopsMin, r.Hops), max(st.hopsMax, r.Hops)
			bw := math.Inf(1)
			for _, x := range r.Forward {
				bw = math.Min(bw, p.Resources()[x].BandwidthBps)
			}
			st.bwMin, st.bwMax = math.Min(st.bwMin, bw), math.Max(st.bwMax, bw)
		}
	}
	slices.Sort(lats)
	st.lat = [3]float64{lats[0], lats[len(lats)/2], lats[len(lats)-1]}
	return st
}

func platformWriteLevels(w io.Writer, levels []platform.Level) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  level\tgroups\tsizes\n")
	for _, l := range levels {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", l.Name, len(l.Groups), platformGroupSizes(l.Groups))
	}
	tw.Flush()
}

// platformGroupSizes renders group sizes compactly: "4x16, 1x5".
func platformGroupSizes(groups [][]int) string {
	count := map[int]int{}
	for _, g := range groups {
		count[len(g)]++
	}
	sizes := make([]int, 0, len(count))
	for s := range count {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	slices.Reverse(sizes)
	parts := make([]string, len(sizes))
	for i, s := range sizes {
		parts[i] = fmt.Sprintf("%dx%d", count[s], s)
	}
	return strings.Join(parts, ", ")
}

func newPlatformValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check platform files and report the first error of each",
		Long: `Validate parses each platform file and reports either a one-line summary or
the first error, as file:line: key: problem. Unknown keys, bad units, duplicate
names, unreachable hosts and rank placements a host cannot hold are all errors.
Exits 1 if any file is invalid.

Example:
  netaware platform validate grid.yaml
  grid.yaml:12: hosts[1].link.bandwidth: "10Gbs": unknown unit (want bps, Kbps, Mbps, Gbps, Bps, KBps, MBps, GBps)`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, f := range args {
				data, err := os.ReadFile(f)
				if err == nil {
					var p *platform.Platform
					if p, err = platform.Parse(f, data); err == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: %s, %d hosts, %d switches, %d ranks, %d truth levels\n",
							f, p.Name, len(p.Hosts()), len(p.Switches()), p.NumRanks(), len(p.Truth()))
						continue
					}
				}
				bad++
				fmt.Fprintln(cmd.ErrOrStderr(), err)
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d platform files invalid", bad, len(args))
			}
			return nil
		},
	}
}

func newPlatformTruthCmd() *cobra.Command {
	var asJSON bool
	var pf *platformPlacementFlags
	cmd := &cobra.Command{
		Use:   "truth NAME|FILE",
		Short: "Print a platform's ground-truth levels",
		Long: `Truth prints the levels discovery is judged against, finest first: socket,
host, switch, the cuts of the routed switch tree, the file's truth: levels, and
all (docs/platforms.md gives the exact rule). With --json it prints a
topology.json document (docs/topology-format.md) with the ranks' host/socket/core and the
levels, which 'netaware topo compare --truth' also accepts.

Examples:
  netaware platform truth dichev-n1
  netaware platform truth fram-like --per-host 4 --json > truth.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := platform.Load(args[0])
			if err != nil {
				return err
			}
			if p, err = pf.apply(p); err != nil {
				return err
			}
			levels := p.Truth()
			if !asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "platform %s: %d ranks\n", p.Name, p.NumRanks())
				platformWriteLevels(cmd.OutOrStdout(), levels)
				return nil
			}
			return platformJSON(cmd.OutOrStdout(), platformTruthTopology(p, levels))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a topology.json document")
	pf = addPlatformPlacementFlags(cmd)
	return cmd
}

func platformTruthTopology(p *platform.Platform, levels []platform.Level) *topo.Topology {
	t := &topo.Topology{Version: topo.Version, Size: p.NumRanks(),
		Method: &topo.Method{Name: "platform-ground-truth", Params: map[string]any{"platform": p.Name}}}
	for r := range p.NumRanks() {
		host, socket, core := p.RankIdentity(r)
		t.Ranks = append(t.Ranks, topo.Rank{Rank: r, Host: host, Socket: &socket, Core: &core})
	}
	for _, l := range levels {
		t.Levels = append(t.Levels, topo.Level{Name: l.Name, Groups: l.Groups})
	}
	return t
}

func newPlatformExportCmd() *cobra.Command {
	var simgrid, fullRoutes bool
	var out string
	cmd := &cobra.Command{
		Use:   "export --simgrid NAME|FILE [-o FILE]",
		Short: "Write a platform in another simulator's format (SimGrid)",
		Long: `Export writes the platform's network as a SimGrid platform file (DTD v4.1):
one host per platform host, links with their bandwidth and latency
(SPLITDUPLEX for full duplex, SHARED for half duplex), and routes over the
same links netaware's simulator routes over: a route per host link and
switch link in a Dijkstra zone when the switches form a tree, else a
Cluster zone per switch joined by zone routes. The file grows with the host
count (2.4 MB for 8,192 hosts). --full-routes writes an explicit route
between every pair of hosts instead (quadratic: 524 MB for 2,048 hosts).
Memory paths inside a host, overheads and noise are not exported.

Example:
  netaware platform export --simgrid zhu-2racks -o zhu.xml
  smpirun -platform zhu.xml -np 30 ...`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !simgrid {
				return usagef("platform export: choose a format: --simgrid")
			}
			p, err := platform.Load(args[0])
			if err != nil {
				return err
			}
			write := p.WriteSimGrid
			if fullRoutes {
				write = p.WriteSimGridFull
			}
			if out == "" || out == "-" {
				return write(cmd.OutOrStdout())
			}
			if err := platformWriteAtomic(out, write); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&simgrid, "simgrid", false, "write a SimGrid platform XML file")
	cmd.Flags().BoolVar(&fullRoutes, "full-routes", false, "write an explicit route per host pair (quadratic in the hosts)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default: standard output)")
	return cmd
}

// platformWriteAtomic writes what write produces to path, all or nothing,
// so that a failed export never leaves a truncated file behind.
func platformWriteAtomic(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

func platformJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
