package topo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// WriteSlurm writes a topology.conf for Slurm's topology/tree plugin:
// "SwitchName=s0 Nodes=a[00-01]" for switches above hosts and
// "SwitchName=s2 Switches=s[0-1]" above switches (see SlurmSwitches), with
// "LinkSpeed=" in Mbit/s where the tree's bandwidth map measured every link
// of the switch to its children.
func (t *Topology) WriteSlurm(w io.Writer) error {
	sws, err := t.SlurmSwitches()
	if err != nil {
		return err
	}
	hosts := 0
	for _, s := range sws {
		hosts += len(s.Nodes)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# topology.conf for Slurm's topology/tree plugin, written by netaware\n")
	if t.Method != nil && t.Method.Name != "" {
		fmt.Fprintf(&b, "# from a topology found by %s\n", t.Method.Name)
	}
	fmt.Fprintf(&b, "# %d hosts, %d switches\n", hosts, len(sws))
	for _, s := range sws {
		if len(s.Nodes) > 0 {
			fmt.Fprintf(&b, "SwitchName=%s Nodes=%s", s.Name, CompressHostlist(s.Nodes))
		} else {
			fmt.Fprintf(&b, "SwitchName=%s Switches=%s", s.Name, CompressHostlist(s.Switches))
		}
		if s.LinkSpeed != "" {
			fmt.Fprintf(&b, " LinkSpeed=%s", s.LinkSpeed)
		}
		b.WriteByte('\n')
	}
	_, err = w.Write(b.Bytes())
	return err
}

// SlurmSwitches is the switch hierarchy Slurm's tree topologies describe
// (topology.conf and the tree of topology.yaml), leaf switches first. Slurm
// schedules whole nodes, so ranks are collapsed to their hosts (every rank
// needs a host name), and the switch layers are the levels coarser than
// hosts. Levels that split a host are left out; a root switch is added when
// the coarsest level has more than one group, since Slurm only places a job
// within one switch fabric. Every switch lists either nodes or switches, as
// Slurm wants: a host hanging directly off an upper switch gets a switch of
// its own. LinkSpeed is the slowest measured bandwidth from the switch to
// its children in Mbit/s (Slurm leaves the unit to the site), empty unless
// the tree carries a bandwidth for every one of those links.
func (t *Topology) SlurmSwitches() ([]SlurmSwitch, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	hostGroups, hosts, err := t.HostPartition()
	if err != nil {
		return nil, fmt.Errorf("slurm topology: %w", err)
	}
	for _, h := range hosts {
		if strings.ContainsAny(h, ",[] \t=#:") {
			return nil, fmt.Errorf("slurm topology: host name %q cannot be written in a hostlist", h)
		}
	}
	root, _, hostOf := hostNest(hostGroups, t.Levels, t.Size)
	if len(root.kids) == 0 {
		// One host: still one switch, so that Slurm knows the node.
		root = &nest{kids: []*nest{root}}
	}
	// Number switches bottom-up by height, left to right, so that the
	// children of one switch get consecutive numbers and compress to s[0-3].
	height := map[*nest]int{}
	top := heights(root, height)
	var byHeight = make([][]*nest, top+1)
	var walk func(n *nest)
	walk = func(n *nest) {
		if len(n.kids) == 0 {
			return
		}
		byHeight[height[n]] = append(byHeight[height[n]], n)
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	next := 0
	for h := 1; h <= top; h++ {
		for _, n := range byHeight[h] {
			n.name = "s" + strconv.Itoa(next)
			next++
		}
	}
	var cuts *treeCuts
	if t.Tree != nil {
		cuts = newTreeCuts(t.Tree, t.Size)
	}
	speed := func(kids []*nest) string {
		if cuts == nil {
			return ""
		}
		slowest := math.Inf(1)
		for _, k := range kids {
			bw, ok := cuts.bandwidth(k.allRanks())
			if !ok {
				return ""
			}
			slowest = min(slowest, bw)
		}
		return strconv.FormatInt(max(1, int64(math.Round(slowest*8/1e6))), 10)
	}
	var out []SlurmSwitch
	for h := 1; h <= top; h++ {
		for _, n := range byHeight[h] {
			leaf := true
			for _, k := range n.kids {
				if len(k.kids) > 0 {
					leaf = false
				}
			}
			sw := SlurmSwitch{Name: n.name, LinkSpeed: speed(n.kids)}
			if leaf {
				for _, k := range n.kids {
					sw.Nodes = append(sw.Nodes, hosts[hostOf[k.ranks[0]]])
				}
				out = append(out, sw)
				continue
			}
			for _, k := range n.kids {
				if len(k.kids) == 0 {
					k.name = "s" + strconv.Itoa(next)
					next++
					out = append(out, SlurmSwitch{Name: k.name, Nodes: []string{hosts[hostOf[k.ranks[0]]]}, LinkSpeed: speed([]*nest{k})})
				}
				sw.Switches = append(sw.Switches, k.name)
			}
			out = append(out, sw)
		}
	}
	return out, nil
}

// SlurmSwitch is one switch of a Slurm tree topology (a line of
// topology.conf); Line is its line number when read from a file.
type SlurmSwitch struct {
	Name      string
	Nodes     []string
	Switches  []string
	LinkSpeed string
	Line      int
}

// ReadSlurm parses a topology.conf of the topology/tree plugin: lines of
// key=value pairs (case-insensitive keys SwitchName, Nodes, Switches,
// LinkSpeed), '#' comments, hostlist expressions in values.
func ReadSlurm(r io.Reader) ([]SlurmSwitch, error) {
	var out []SlurmSwitch
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	line := 0
	seen := map[string]int{}
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		sw := SlurmSwitch{Line: line}
		for _, f := range fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("topology.conf:%d: %q: want Key=Value", line, f)
			}
			var err error
			switch strings.ToLower(k) {
			case "switchname":
				sw.Name = v
			case "nodes":
				sw.Nodes, err = ExpandHostlist(v)
			case "switches":
				sw.Switches, err = ExpandHostlist(v)
			case "linkspeed":
				sw.LinkSpeed = v
			default:
				return nil, fmt.Errorf("topology.conf:%d: unknown key %q (the tree plugin knows SwitchName, Nodes, Switches, LinkSpeed)", line, k)
			}
			if err != nil {
				return nil, fmt.Errorf("topology.conf:%d: %s: %w", line, k, err)
			}
		}
		if sw.Name == "" {
			return nil, fmt.Errorf("topology.conf:%d: line has no SwitchName", line)
		}
		if prev, dup := seen[sw.Name]; dup {
			return nil, fmt.Errorf("topology.conf:%d: switch %q already defined on line %d", line, sw.Name, prev)
		}
		seen[sw.Name] = line
		out = append(out, sw)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("topology.conf:%d: %w", line+1, err)
	}
	return out, nil
}

// SlurmLevels maps a topology.conf onto ranks through their host names:
// a "host" level, then one level per switch height (slurm-1 = leaf
// switches, ...). Every rank's host must be under exactly one switch;
// switches and hosts no rank uses are ignored.
func SlurmLevels(switches []SlurmSwitch, ranks []Rank) ([]Level, error) {
	byName := map[string]*SlurmSwitch{}
	for i := range switches {
		byName[switches[i].Name] = &switches[i]
	}
	parent := map[string]string{}
	hostSwitch := map[string]string{}
	for _, s := range switches {
		for _, c := range s.Switches {
			if byName[c] == nil {
				return nil, fmt.Errorf("topology.conf:%d: switch %q lists unknown switch %q", s.Line, s.Name, c)
			}
			if p, dup := parent[c]; dup {
				return nil, fmt.Errorf("topology.conf:%d: switch %q is under both %q and %q", s.Line, c, p, s.Name)
			}
			parent[c] = s.Name
		}
		for _, h := range s.Nodes {
			if p, dup := hostSwitch[h]; dup && p != s.Name {
				return nil, fmt.Errorf("topology.conf:%d: node %q is under both %q and %q", s.Line, h, p, s.Name)
			}
			hostSwitch[h] = s.Name
		}
	}
	// Reject cycles: walking up from any switch must end.
	for _, s := range switches {
		steps := 0
		for n := s.Name; ; steps++ {
			p, ok := parent[n]
			if !ok {
				break
			}
			if steps > len(switches) {
				return nil, fmt.Errorf("topology.conf:%d: switch %q is in a cycle", s.Line, s.Name)
			}
			n = p
		}
	}
	nodes := map[string]*nest{}
	get := func(name string) *nest {
		if nodes[name] == nil {
			nodes[name] = &nest{name: name}
		}
		return nodes[name]
	}
	hostNest := map[string]*nest{}
	for _, r := range ranks {
		if r.Host == "" {
			return nil, fmt.Errorf("rank %d has no host name to place in topology.conf", r.Rank)
		}
		sw, ok := hostSwitch[r.Host]
		if !ok {
			return nil, fmt.Errorf("rank %d: host %q is under no switch in topology.conf", r.Rank, r.Host)
		}
		h := hostNest[r.Host]
		if h == nil {
			h = &nest{name: r.Host}
			hostNest[r.Host] = h
			get(sw).kids = append(get(sw).kids, h)
		}
		h.ranks = append(h.ranks, r.Rank)
	}
	// Link used switches up to their roots, in file order for determinism.
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	linked := map[string]bool{}
	for _, n := range names {
		for c := n; !linked[c]; {
			linked[c] = true
			p, ok := parent[c]
			if !ok {
				break
			}
			get(p).kids = append(get(p).kids, get(c))
			c = p
		}
	}
	var roots []*nest
	for name, n := range nodes {
		if _, ok := parent[name]; !ok {
			roots = append(roots, n)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return minRank(roots[i]) < minRank(roots[j]) })
	levels := levelsFromNest(roots, "slurm")
	if len(levels) > 0 {
		levels[0].Name = "host"
	}
	return levels, nil
}

// ReadSlurmTopology reads a topology.conf and applies it to ranks (which
// carry the host names) to give a topology with levels and no tree.
func ReadSlurmTopology(r io.Reader, ranks []Rank) (*Topology, error) {
	sw, err := ReadSlurm(r)
	if err != nil {
		return nil, err
	}
	levels, err := SlurmLevels(sw, ranks)
	if err != nil {
		return nil, err
	}
	t := &Topology{Version: Version, Size: len(ranks), Ranks: ranks, Levels: levels, Method: &Method{Name: "slurm-topology.conf"}}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}
