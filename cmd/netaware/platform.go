package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netaware/internal/atomicfile"
	"netaware/platform"
	"netaware/units"
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

// platformListOptions are 'netaware platform list”s options.
type platformListOptions struct {
	streams
	asJSON bool
}

func newPlatformListCmd() *cobra.Command {
	o := &platformListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in platforms",
		Long: `List prints the built-in platforms with a one-line description each. Every
built-in cites, in its header comment ('netaware platform show NAME --source'),
the seed paper section each number comes from.

Example:
  netaware platform list --json`,
		Args: cobra.NoArgs,
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func (o *platformListOptions) validate() error { return nil }

func (o *platformListOptions) run(context.Context) error {
	bs := platform.Builtins()
	if o.asJSON {
		type entry struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		var out []entry
		for _, b := range bs {
			out = append(out, entry{b.Name, b.Description})
		}
		return platformJSON(o.out, out)
	}
	tw := tabwriter.NewWriter(o.out, 0, 4, 2, ' ', 0)
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\n", b.Name, b.Description)
	}
	return tw.Flush()
}

// platformPlacementFlags lets show and truth look at another rank placement.
type platformPlacementFlags struct {
	perHost string
	order   string
	// perHostN is perHost parsed by validate.
	perHostN int
}

func addPlatformPlacementFlags(cmd *cobra.Command) *platformPlacementFlags {
	f := &platformPlacementFlags{}
	cmd.Flags().StringVar(&f.perHost, "per-host", "", `ranks per host: a number or "cores" (default: the file's ranks.per_host)`)
	cmd.Flags().StringVar(&f.order, "order", "", "rank order: block or cyclic (default: the file's ranks.order)")
	return f
}

func (f *platformPlacementFlags) validate() error {
	switch f.perHost {
	case "":
	case "cores":
		f.perHostN = platform.PerHostCores
	default:
		n, err := strconv.Atoi(f.perHost)
		if err != nil || n < 1 {
			return usagef("--per-host %q: want a positive number or \"cores\"", f.perHost)
		}
		f.perHostN = n
	}
	if f.order != "" && f.order != platform.OrderBlock && f.order != platform.OrderCyclic {
		return usagef("--order %q: want block or cyclic", f.order)
	}
	return nil
}

// apply places p's ranks as the flags say (validate ran before).
func (f *platformPlacementFlags) apply(p *platform.Platform) (*platform.Platform, error) {
	if f.perHost == "" && f.order == "" {
		return p, nil
	}
	perHost, order := p.Placement()
	if f.perHost != "" {
		perHost = f.perHostN
	}
	if f.order != "" {
		order = f.order
	}
	q, err := p.Place(perHost, order)
	if err != nil {
		return nil, fmt.Errorf("platform %s: %w", p.Name, err)
	}
	return q, nil
}

// platformShowOptions are 'netaware platform show”s options.
type platformShowOptions struct {
	streams
	name           string
	source, asJSON bool
	placement      *platformPlacementFlags
}

func newPlatformShowCmd() *cobra.Command {
	o := &platformShowOptions{}
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
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.source, "source", false, "print the platform file instead of a summary")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the summary as JSON (times in seconds, bandwidths in bytes per second)")
	o.placement = addPlatformPlacementFlags(cmd)
	return cmd
}

func (o *platformShowOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.name = args[0]
	return nil
}

func (o *platformShowOptions) validate() error { return o.placement.validate() }

func (o *platformShowOptions) run(context.Context) error {
	if o.source {
		data, err := platform.Source(o.name)
		if err != nil {
			return err
		}
		_, err = o.out.Write(data)
		return err
	}
	p, err := platform.Load(o.name)
	if err != nil {
		return err
	}
	if p, err = o.placement.apply(p); err != nil {
		return err
	}
	if o.asJSON {
		return platformJSON(o.out, summarizePlatform(p))
	}
	return platformShow(o.out, p)
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
			fmt.Fprintf(w, ", intra-socket %s %s", units.FormatByteRate(t.IntraSocket.BandwidthBps), units.FormatTime(t.IntraSocket.LatencyS))
		}
		if t.InterSocket != nil {
			fmt.Fprintf(w, ", inter-socket %s %s", units.FormatByteRate(t.InterSocket.BandwidthBps), units.FormatTime(t.InterSocket.LatencyS))
		}
		o := t.Overhead
		if o != (platform.Overhead{}) {
			fmt.Fprintf(w, ", overhead send %s recv %s", units.FormatTime(o.SendS), units.FormatTime(o.RecvS))
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\nhosts by switch:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range platformHostRuns(hosts) {
		h := r[0]
		fmt.Fprintf(tw, "  %s\t%d host(s) %s..%s\ttype %s\tlink %s %s%s\n", h.Switch, len(r), h.Name, r[len(r)-1].Name,
			h.Type.Name, units.FormatBandwidth(h.Link.BandwidthBps), units.FormatTime(h.Link.LatencyS), platformDuplexNote(h.Link))
	}
	tw.Flush()

	if len(p.Links()) > 0 {
		fmt.Fprintf(w, "\nswitch links:\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, l := range p.Links() {
			fmt.Fprintf(tw, "  %s - %s\t%s\t%s%s\n", l.A, l.B, units.FormatBandwidth(l.BandwidthBps), units.FormatTime(l.LatencyS), platformDuplexNote(l.LinkSpec))
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
	extra := ""
	if tcp.QueueS > 0 {
		extra += fmt.Sprintf(", queue %g s", tcp.QueueS)
	}
	if tcp.SendBufferBytes > 0 {
		extra += fmt.Sprintf(", send buffer %d bytes", tcp.SendBufferBytes)
	}
	fmt.Fprintf(w, "tcp: %s sharing, crosstraffic %g, %s%s\n", tcp.Sharing(), tcp.CrossTraffic, window, extra)

	rs := p.RouteStats()
	fmt.Fprintf(w, "\nroutes between hosts (%s):\n", rs.Scope)
	fmt.Fprintf(w, "  one-way latency  min %s  median %s  max %s\n", units.FormatTime(rs.LatencyMinS), units.FormatTime(rs.LatencyMedianS), units.FormatTime(rs.LatencyMaxS))
	fmt.Fprintf(w, "  links crossed    min %d  max %d\n", rs.HopsMin, rs.HopsMax)
	fmt.Fprintf(w, "  bottleneck       min %s  max %s\n", units.FormatBandwidth(rs.BottleneckMinBps), units.FormatBandwidth(rs.BottleneckMaxBps))

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
		Sharing         string  `json:"sharing"`
		CrossTraffic    float64 `json:"crosstraffic"`
		WindowBytes     int64   `json:"window_bytes,omitempty"`
		QueueS          float64 `json:"queue_s,omitempty"`
		SendBufferBytes int64   `json:"send_buffer_bytes,omitempty"`
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
	s.TCP.QueueS, s.TCP.SendBufferBytes = tcp.QueueS, tcp.SendBufferBytes
	s.TCP.Sharing = tcp.Sharing()
	rs := p.RouteStats()
	r := &s.Routes
	r.Scope, r.LatencyMinS, r.LatencyMedianS, r.LatencyMaxS = rs.Scope, rs.LatencyMinS, rs.LatencyMedianS, rs.LatencyMaxS
	r.HopsMin, r.HopsMax, r.BottleneckMin, r.BottleneckMax = rs.HopsMin, rs.HopsMax, rs.BottleneckMinBps, rs.BottleneckMaxBps
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

// platformValidateOptions are 'netaware platform validate”s options.
type platformValidateOptions struct {
	streams
	files []string
}

func newPlatformValidateCmd() *cobra.Command {
	o := &platformValidateOptions{}
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
		RunE: runOptions(o),
	}
}

func (o *platformValidateOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.files = args
	return nil
}

func (o *platformValidateOptions) validate() error { return nil }

func (o *platformValidateOptions) run(context.Context) error {
	bad := 0
	for _, f := range o.files {
		data, err := os.ReadFile(f)
		if err == nil {
			var p *platform.Platform
			if p, err = platform.Parse(f, data); err == nil {
				fmt.Fprintf(o.out, "%s: ok: %s, %d hosts, %d switches, %d ranks, %d truth levels\n",
					f, p.Name, len(p.Hosts()), len(p.Switches()), p.NumRanks(), len(p.Truth()))
				continue
			}
		}
		bad++
		fmt.Fprintln(o.errOut, err)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d platform files invalid", bad, len(o.files))
	}
	return nil
}

// platformTruthOptions are 'netaware platform truth”s options.
type platformTruthOptions struct {
	streams
	name      string
	asJSON    bool
	placement *platformPlacementFlags
}

func newPlatformTruthCmd() *cobra.Command {
	o := &platformTruthOptions{}
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
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print a topology.json document")
	o.placement = addPlatformPlacementFlags(cmd)
	return cmd
}

func (o *platformTruthOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.name = args[0]
	return nil
}

func (o *platformTruthOptions) validate() error { return o.placement.validate() }

func (o *platformTruthOptions) run(context.Context) error {
	p, err := platform.Load(o.name)
	if err != nil {
		return err
	}
	if p, err = o.placement.apply(p); err != nil {
		return err
	}
	if !o.asJSON {
		fmt.Fprintf(o.out, "platform %s: %d ranks\n", p.Name, p.NumRanks())
		platformWriteLevels(o.out, p.Truth())
		return nil
	}
	return platformJSON(o.out, p.TruthTopology())
}

// platformExportOptions are 'netaware platform export”s options.
type platformExportOptions struct {
	streams
	name, outFile       string
	simgrid, fullRoutes bool
}

func newPlatformExportCmd() *cobra.Command {
	o := &platformExportOptions{}
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
		RunE: runOptions(o),
	}
	cmd.Flags().BoolVar(&o.simgrid, "simgrid", false, "write a SimGrid platform XML file")
	cmd.Flags().BoolVar(&o.fullRoutes, "full-routes", false, "write an explicit route per host pair (quadratic in the hosts)")
	cmd.Flags().StringVarP(&o.outFile, "output", "o", "", "output file (default: standard output)")
	return cmd
}

func (o *platformExportOptions) complete(cmd *cobra.Command, args []string) error {
	o.completeStreams(cmd)
	o.name = args[0]
	return nil
}

func (o *platformExportOptions) validate() error {
	if !o.simgrid {
		return usagef("platform export: choose a format: --simgrid")
	}
	return nil
}

func (o *platformExportOptions) run(context.Context) error {
	p, err := platform.Load(o.name)
	if err != nil {
		return err
	}
	write := p.WriteSimGrid
	if o.fullRoutes {
		write = p.WriteSimGridFull
	}
	if o.outFile == "" || o.outFile == "-" {
		return write(o.out)
	}
	if err := platformWriteAtomic(o.outFile, write); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "wrote %s\n", o.outFile)
	return nil
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
