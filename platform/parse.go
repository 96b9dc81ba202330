package platform

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load returns a built-in platform by name, or else reads the file at the
// path nameOrPath.
func Load(nameOrPath string) (*Platform, error) {
	if data, ok := builtinData(nameOrPath); ok {
		return Parse(builtinFile(nameOrPath), data)
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		if os.IsNotExist(err) && !strings.ContainsAny(nameOrPath, "/.") {
			return nil, fmt.Errorf("platform %q: neither a built-in platform (see 'netaware platform list') nor a file", nameOrPath)
		}
		return nil, fmt.Errorf("platform: %w", err)
	}
	return Parse(nameOrPath, data)
}

// Parse reads and validates a platform file. Errors name the file, the line
// and the key: `grid.yaml:12: hosts[1].link.bandwidth: "10Gbs": unknown unit (...)`.
func Parse(filename string, data []byte) (p *Platform, err error) {
	defer func() {
		// The YAML library is third-party code; a panic in it must still
		// surface as an error on this file.
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%s: malformed YAML (%v)", filename, r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntaxError(filename, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty file", filename)
	}
	d := &decoder{file: filename}
	p, err = d.platform(doc.Content[0])
	if err != nil {
		return nil, err
	}
	return p, nil
}

// yamlParserProblems are the problems the YAML library's parser (not its
// scanner) reports, with the construct it was parsing.
var yamlParserProblems = map[string]string{
	"did not find expected node content":     "a node",
	"did not find expected '-' indicator":    "a block sequence",
	"did not find expected key":              "a block mapping",
	"did not find expected ',' or ']'":       "a flow sequence",
	"did not find expected ',' or '}'":       "a flow mapping",
	"found undefined tag handle":             "a node",
	"did not find expected <document start>": "",
	"found incompatible YAML document":       "",
}

var yamlLineMessage = regexp.MustCompile(`^line ([0-9]+): (.*)$`)

// yamlSyntaxError turns a YAML syntax error into "file:line: problem".
// The library counts lines from 0 for its parser's errors (from 1 for its
// scanner's), so parser errors pointed one line early. The line is where
// the unfinished construct starts (or, for one starting on line 1, where
// the problem was found).
func yamlSyntaxError(filename string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	m := yamlLineMessage.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: %s", filename, msg)
	}
	line, _ := strconv.Atoi(m[1])
	problem := m[2]
	construct, isParser := yamlParserProblems[problem]
	if !isParser {
		return fmt.Errorf("%s:%d: %s", filename, line, problem)
	}
	line++
	if construct != "" {
		problem += " while parsing " + construct
	}
	return fmt.Errorf("%s:%d: %s", filename, line, problem)
}

// decoder walks yaml.Nodes so that every error can name file, line and key.
type decoder struct{ file string }

func (d *decoder) errf(n *yaml.Node, path, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	return fmt.Errorf("%s:%d: %s", d.file, n.Line, msg)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// fields checks that n is a mapping whose keys are all allowed and unique,
// and returns key -> value node.
func (d *decoder) fields(n *yaml.Node, path string, allowed ...string) (map[string]*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		return nil, d.errf(n, path, "YAML aliases are not supported")
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.errf(n, path, "want a mapping (key: value)")
	}
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, d.errf(k, path, "keys must be plain words")
		}
		ok := false
		for _, a := range allowed {
			if k.Value == a {
				ok = true
				break
			}
		}
		if !ok {
			return nil, d.errf(k, join(path, k.Value), "unknown key (want %s)", strings.Join(allowed, ", "))
		}
		if _, dup := m[k.Value]; dup {
			return nil, d.errf(k, join(path, k.Value), "key given twice")
		}
		if v.Kind == yaml.AliasNode {
			return nil, d.errf(v, join(path, k.Value), "YAML aliases are not supported")
		}
		m[k.Value] = v
	}
	return m, nil
}

func (d *decoder) require(m map[string]*yaml.Node, n *yaml.Node, path string, keys ...string) error {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return d.errf(n, path, "missing key %q", k)
		}
	}
	return nil
}

func (d *decoder) scalar(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.errf(n, path, "want a single value")
	}
	if n.Tag == "!!null" {
		return "", d.errf(n, path, "empty value")
	}
	return n.Value, nil
}

func (d *decoder) seq(n *yaml.Node, path string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, path, "want a list")
	}
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			return nil, d.errf(c, index(path, i), "YAML aliases are not supported")
		}
	}
	return n.Content, nil
}

func (d *decoder) integer(n *yaml.Node, path string, min int) (int, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, d.errf(n, path, "%q: want a whole number", s)
	}
	if v < min {
		return 0, d.errf(n, path, "%d: want at least %d", v, min)
	}
	return v, nil
}

func (d *decoder) fraction(n *yaml.Node, path string, max float64) (float64, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > max {
		return 0, d.errf(n, path, "%q: want a number from 0 to %g", s, max)
	}
	return v, nil
}

func (d *decoder) unit(n *yaml.Node, path string, parse func(string) (float64, error)) (float64, error) {
	return decodeScalar(d, n, path, parse)
}

// size reads a byte count with optional unit (64KiB, 4MiB).
func (d *decoder) size(n *yaml.Node, path string) (int64, error) {
	return decodeScalar(d, n, path, ParseSize)
}

// decodeScalar reads a scalar with parse, naming the key and line on error.
func decodeScalar[T any](d *decoder, n *yaml.Node, path string, parse func(string) (T, error)) (T, error) {
	var zero T
	s, err := d.scalar(n, path)
	if err != nil {
		return zero, err
	}
	v, err := parse(s)
	if err != nil {
		return zero, d.errf(n, path, "%v", err)
	}
	return v, nil
}

func (d *decoder) names(n *yaml.Node, path string) ([]string, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return nil, err
	}
	names, err := ExpandNames(s)
	if err != nil {
		return nil, d.errf(n, path, "%v", err)
	}
	return names, nil
}

// linkSpec reads {bandwidth, latency[, duplex]}.
func (d *decoder) linkSpec(n *yaml.Node, path string, extra ...string) (LinkSpec, map[string]*yaml.Node, error) {
	var ls LinkSpec
	m, err := d.fields(n, path, append([]string{"bandwidth", "latency"}, extra...)...)
	if err != nil {
		return ls, nil, err
	}
	if err := d.require(m, n, path, "bandwidth", "latency"); err != nil {
		return ls, nil, err
	}
	if ls.BandwidthBps, err = d.unit(m["bandwidth"], join(path, "bandwidth"), ParseBandwidth); err != nil {
		return ls, nil, err
	}
	if ls.LatencyS, err = d.unit(m["latency"], join(path, "latency"), ParseTime); err != nil {
		return ls, nil, err
	}
	if v, ok := m["duplex"]; ok {
		s, err := d.scalar(v, join(path, "duplex"))
		if err != nil {
			return ls, nil, err
		}
		switch s {
		case "full":
		case "half":
			ls.HalfDuplex = true
		default:
			return ls, nil, d.errf(v, join(path, "duplex"), "%q: want half or full", s)
		}
	}
	return ls, m, nil
}

// Limits that keep a typo from exhausting the machine; they are far above
// any platform the simulator can run.
const (
	MaxHosts          = 1 << 16
	MaxRanks          = 1 << 20
	maxSockets        = 64
	maxCoresPerSocket = 1024
)

var topKeys = []string{"version", "name", "description", "switches", "links", "host_types", "hosts", "ranks", "noise", "tcp", "truth"}

// nameUse remembers where a name was defined, for duplicate messages.
type nameUse struct {
	path string
	line int
}

func (d *decoder) platform(root *yaml.Node) (*Platform, error) {
	top, err := d.fields(root, "", topKeys...)
	if err != nil {
		return nil, err
	}
	if err := d.require(top, root, "", "version", "switches", "hosts"); err != nil {
		return nil, err
	}
	if v, err := d.integer(top["version"], "version", 0); err != nil {
		return nil, err
	} else if v != 1 {
		return nil, d.errf(top["version"], "version", "%d: this netaware reads version 1", v)
	}
	p := &Platform{
		File:      d.file,
		swIndex:   map[string]int{},
		hostIndex: map[string]int{},
		tcp:       TCPSpec{CrossTraffic: DefaultCrossTraffic},
		routes:    &routeCache{trees: map[int]*spTree{}, paths: map[[2]int]*switchPath{}},
	}
	p.Name = strings.TrimSuffix(filepath.Base(d.file), filepath.Ext(d.file))
	if v, ok := top["name"]; ok {
		if p.Name, err = d.scalar(v, "name"); err != nil {
			return nil, err
		}
	}
	if v, ok := top["description"]; ok {
		if p.Description, err = d.scalar(v, "description"); err != nil {
			return nil, err
		}
	}
	used := map[string]nameUse{}
	claim := func(name string, n *yaml.Node, path string) error {
		if u, dup := used[name]; dup {
			return d.errf(n, path, "%q: name already used by %s (line %d)", name, u.path, u.line)
		}
		used[name] = nameUse{path, n.Line}
		return nil
	}

	// Switches.
	sws, err := d.seq(top["switches"], "switches")
	if err != nil {
		return nil, err
	}
	for i, sn := range sws {
		path := index("switches", i)
		names, err := d.names(sn, path)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if err := claim(name, sn, path); err != nil {
				return nil, err
			}
			p.swIndex[name] = len(p.switches)
			p.switches = append(p.switches, name)
		}
	}
	p.adj = make([][]adjEdge, len(p.switches))

	// Switch-to-switch links.
	if v, ok := top["links"]; ok {
		if err := d.links(p, v); err != nil {
			return nil, err
		}
	}

	// Host types.
	types := map[string]*HostType{}
	if v, ok := top["host_types"]; ok {
		m, err := d.fields(v, "host_types", mappingKeys(v)...)
		if err != nil {
			return nil, err
		}
		_ = m
		for i := 0; i+1 < len(v.Content); i += 2 {
			t, err := d.hostType(v.Content[i].Value, v.Content[i+1], join("host_types", v.Content[i].Value))
			if err != nil {
				return nil, err
			}
			t.Line = v.Content[i].Line
			types[t.Name] = t
			p.types = append(p.types, t)
		}
	}
	var defaultType *HostType

	// Hosts.
	hs, err := d.seq(top["hosts"], "hosts")
	if err != nil {
		return nil, err
	}
	hostEntry := []int{} // per host, its entry index, for messages
	for i, hn := range hs {
		path := index("hosts", i)
		m, err := d.fields(hn, path, "names", "switch", "type", "link")
		if err != nil {
			return nil, err
		}
		if err := d.require(m, hn, path, "names", "switch", "link"); err != nil {
			return nil, err
		}
		names, err := d.names(m["names"], join(path, "names"))
		if err != nil {
			return nil, err
		}
		swName, err := d.scalar(m["switch"], join(path, "switch"))
		if err != nil {
			return nil, err
		}
		sw, ok := p.swIndex[swName]
		if !ok {
			return nil, d.errf(m["switch"], join(path, "switch"), "%q: no such switch", swName)
		}
		var t *HostType
		if tn, ok := m["type"]; ok {
			name, err := d.scalar(tn, join(path, "type"))
			if err != nil {
				return nil, err
			}
			if t = types[name]; t == nil {
				return nil, d.errf(tn, join(path, "type"), "%q: no such host type", name)
			}
		} else {
			if defaultType == nil {
				defaultType = &HostType{Name: "(default)", Sockets: 1, CoresPerSocket: 1, Line: hn.Line}
			}
			t = defaultType
		}
		link, _, err := d.linkSpec(m["link"], join(path, "link"), "duplex")
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if err := claim(name, m["names"], join(path, "names")); err != nil {
				return nil, err
			}
			if len(p.hosts) == MaxHosts {
				return nil, d.errf(m["names"], join(path, "names"), "more than %d hosts", MaxHosts)
			}
			p.hostIndex[name] = len(p.hosts)
			p.hosts = append(p.hosts, Host{Name: name, Switch: swName, Type: t, Link: link, Line: hn.Line, sw: sw})
			hostEntry = append(hostEntry, i)
		}
	}
	if len(p.hosts) == 0 {
		return nil, d.errf(top["hosts"], "hosts", "no hosts")
	}
	if err := d.connected(p, hs, hostEntry); err != nil {
		return nil, err
	}

	// Ranks.
	perHost, order := 1, OrderBlock
	rankNode := root
	if v, ok := top["ranks"]; ok {
		rankNode = v
		m, err := d.fields(v, "ranks", "per_host", "order")
		if err != nil {
			return nil, err
		}
		if ph, ok := m["per_host"]; ok {
			if ph.Kind == yaml.ScalarNode && ph.Value == "cores" {
				perHost = PerHostCores
			} else if perHost, err = d.integer(ph, "ranks.per_host", 1); err != nil {
				return nil, d.errf(ph, "ranks.per_host", "%q: want a positive whole number or \"cores\"", ph.Value)
			}
		}
		if o, ok := m["order"]; ok {
			if order, err = d.scalar(o, "ranks.order"); err != nil {
				return nil, err
			}
			if order != OrderBlock && order != OrderCyclic {
				return nil, d.errf(o, "ranks.order", "%q: want block or cyclic", order)
			}
		}
	}

	// Noise and TCP.
	if v, ok := top["noise"]; ok {
		if err := d.noise(p, v); err != nil {
			return nil, err
		}
	}
	if v, ok := top["tcp"]; ok {
		if err := d.tcpSpec(p, v); err != nil {
			return nil, err
		}
	}

	p.buildResources()
	if err := p.place(perHost, order); err != nil {
		return nil, d.errf(rankNode, "ranks", "%v", err)
	}
	if v, ok := top["truth"]; ok {
		if err := d.truth(p, v); err != nil {
			return nil, err
		}
	}
	if _, err := p.hostLevels(); err != nil {
		return nil, d.errf(top["truth"], "truth", "%v", err)
	}
	return p, nil
}

func mappingKeys(n *yaml.Node) []string {
	var keys []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			keys = append(keys, n.Content[i].Value)
		}
	}
	return keys
}

func (d *decoder) links(p *Platform, v *yaml.Node) error {
	ls, err := d.seq(v, "links")
	if err != nil {
		return err
	}
	seen := map[[2]int]int{}
	for i, ln := range ls {
		path := index("links", i)
		spec, m, err := d.linkSpec(ln, path, "between", "duplex")
		if err != nil {
			return err
		}
		if err := d.require(m, ln, path, "between"); err != nil {
			return err
		}
		ends, err := d.seq(m["between"], join(path, "between"))
		if err != nil {
			return err
		}
		if len(ends) != 2 {
			return d.errf(m["between"], join(path, "between"), "want exactly two switches")
		}
		var idx [2]int
		var names [2]string
		for j, e := range ends {
			names[j], err = d.scalar(e, join(path, "between"))
			if err != nil {
				return err
			}
			var ok bool
			if idx[j], ok = p.swIndex[names[j]]; !ok {
				return d.errf(e, join(path, "between"), "%q: no such switch (links join switches; hosts name their switch)", names[j])
			}
		}
		if idx[0] == idx[1] {
			return d.errf(m["between"], join(path, "between"), "a link must join two different switches")
		}
		key := [2]int{min(idx[0], idx[1]), max(idx[0], idx[1])}
		if prev, dup := seen[key]; dup {
			return d.errf(ln, path, "a second link between %s and %s (first at line %d)", names[0], names[1], prev)
		}
		seen[key] = ln.Line
		l := len(p.links)
		p.links = append(p.links, Link{A: names[0], B: names[1], LinkSpec: spec, Line: ln.Line, a: idx[0], b: idx[1]})
		p.adj[idx[0]] = append(p.adj[idx[0]], adjEdge{to: idx[1], link: l})
		p.adj[idx[1]] = append(p.adj[idx[1]], adjEdge{to: idx[0], link: l})
	}
	return nil
}

func (d *decoder) hostType(name string, n *yaml.Node, path string) (*HostType, error) {
	if err := checkName(name); err != nil {
		return nil, d.errf(n, path, "%v", err)
	}
	m, err := d.fields(n, path, "sockets", "cores_per_socket", "intra_socket", "inter_socket", "overhead")
	if err != nil {
		return nil, err
	}
	t := &HostType{Name: name, Sockets: 1, CoresPerSocket: 1}
	if v, ok := m["sockets"]; ok {
		if t.Sockets, err = d.integer(v, join(path, "sockets"), 1); err != nil {
			return nil, err
		}
	}
	if v, ok := m["cores_per_socket"]; ok {
		if t.CoresPerSocket, err = d.integer(v, join(path, "cores_per_socket"), 1); err != nil {
			return nil, err
		}
	}
	if t.Sockets > maxSockets || t.CoresPerSocket > maxCoresPerSocket {
		return nil, d.errf(n, path, "more than %d sockets or %d cores per socket", maxSockets, maxCoresPerSocket)
	}
	for _, k := range []string{"intra_socket", "inter_socket"} {
		if v, ok := m[k]; ok {
			ls, _, err := d.linkSpec(v, join(path, k))
			if err != nil {
				return nil, err
			}
			if k == "intra_socket" {
				t.IntraSocket = &ls
			} else {
				t.InterSocket = &ls
			}
		}
	}
	if v, ok := m["overhead"]; ok {
		op := join(path, "overhead")
		om, err := d.fields(v, op, "send", "recv", "send_per_byte", "recv_per_byte")
		if err != nil {
			return nil, err
		}
		dst := map[string]*float64{"send": &t.Overhead.SendS, "recv": &t.Overhead.RecvS,
			"send_per_byte": &t.Overhead.SendPerByteS, "recv_per_byte": &t.Overhead.RecvPerByteS}
		for k, vn := range om {
			if *dst[k], err = d.unit(vn, join(op, k), ParseTime); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// connected checks that every host and switch is reachable from the first
// host, naming the first one that is not.
func (d *decoder) connected(p *Platform, entries []*yaml.Node, hostEntry []int) error {
	seen := make([]bool, len(p.switches))
	start := p.hosts[0].sw
	seen[start] = true
	queue := []int{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range p.adj[u] {
			if !seen[e.to] {
				seen[e.to] = true
				queue = append(queue, e.to)
			}
		}
	}
	for h, host := range p.hosts {
		if !seen[host.sw] {
			i := hostEntry[h]
			return d.errf(entries[i], index("hosts", i), "host %s (switch %s) is unreachable from host %s (switch %s): the links do not connect them",
				host.Name, host.Switch, p.hosts[0].Name, p.hosts[0].Switch)
		}
	}
	for s, name := range p.switches {
		if !seen[s] {
			return fmt.Errorf("%s: switches: switch %s is unreachable from host %s (switch %s)", d.file, name, p.hosts[0].Name, p.hosts[0].Switch)
		}
	}
	return nil
}

func (d *decoder) noise(p *Platform, v *yaml.Node) error {
	m, err := d.fields(v, "noise", "seed", "profile", "latency_jitter", "bandwidth_jitter")
	if err != nil {
		return err
	}
	if s, ok := m["profile"]; ok {
		str, err := d.scalar(s, "noise.profile")
		if err != nil {
			return err
		}
		if p.noise.Profile, err = ParseNoiseProfile(str); err != nil {
			return d.errf(s, "noise.profile", "%v", err)
		}
		// A profile is a whole model: relative jitters on top of it would
		// describe a network nobody measured.
		for _, k := range []string{"latency_jitter", "bandwidth_jitter"} {
			if n, ok := m[k]; ok {
				return d.errf(n, "noise."+k, "not allowed with profile %q (the profile sets it)", str)
			}
		}
	}
	if s, ok := m["seed"]; ok {
		str, err := d.scalar(s, "noise.seed")
		if err != nil {
			return err
		}
		if p.noise.Seed, err = strconv.ParseInt(str, 10, 64); err != nil {
			return d.errf(s, "noise.seed", "%q: want a whole number", str)
		}
	}
	if s, ok := m["latency_jitter"]; ok {
		if p.noise.LatencyJitter, err = d.fraction(s, "noise.latency_jitter", 1); err != nil {
			return err
		}
	}
	if s, ok := m["bandwidth_jitter"]; ok {
		if p.noise.BandwidthJitter, err = d.fraction(s, "noise.bandwidth_jitter", 1); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) tcpSpec(p *Platform, v *yaml.Node) error {
	m, err := d.fields(v, "tcp", "crosstraffic", "window_bytes", "queue", "send_buffer", "sharing")
	if err != nil {
		return err
	}
	if s, ok := m["crosstraffic"]; ok {
		if p.tcp.CrossTraffic, err = d.fraction(s, "tcp.crosstraffic", 1); err != nil {
			return err
		}
	}
	if s, ok := m["window_bytes"]; ok {
		if p.tcp.WindowBytes, err = d.size(s, "tcp.window_bytes"); err != nil {
			return err
		}
	}
	if s, ok := m["send_buffer"]; ok {
		if p.tcp.SendBufferBytes, err = d.size(s, "tcp.send_buffer"); err != nil {
			return err
		}
	}
	if s, ok := m["queue"]; ok {
		if p.tcp.QueueS, err = d.unit(s, "tcp.queue", ParseTime); err != nil {
			return err
		}
	}
	if s, ok := m["sharing"]; ok {
		v, err := d.scalar(s, "tcp.sharing")
		if err != nil {
			return err
		}
		switch v {
		case SharingMaxMin:
		case SharingRTT:
			p.tcp.RTTSharing = true
		default:
			return d.errf(s, "tcp.sharing", "%q: want %s or %s", v, SharingMaxMin, SharingRTT)
		}
	}
	return nil
}

// truth reads the `truth:` levels: groups of host-name ranges that must
// partition the hosts.
func (d *decoder) truth(p *Platform, v *yaml.Node) error {
	ls, err := d.seq(v, "truth")
	if err != nil {
		return err
	}
	names := map[string]int{}
	for i, ln := range ls {
		path := index("truth", i)
		m, err := d.fields(ln, path, "name", "groups")
		if err != nil {
			return err
		}
		if err := d.require(m, ln, path, "name", "groups"); err != nil {
			return err
		}
		name, err := d.scalar(m["name"], join(path, "name"))
		if err != nil {
			return err
		}
		if prev, dup := names[name]; dup {
			return d.errf(m["name"], join(path, "name"), "%q: level name already used by truth[%d]", name, prev)
		}
		names[name] = i
		gs, err := d.seq(m["groups"], join(path, "groups"))
		if err != nil {
			return err
		}
		owner := make([]int, len(p.hosts))
		for h := range owner {
			owner[h] = -1
		}
		ts := truthSpec{name: name, line: ln.Line}
		for g, gn := range gs {
			gp := index(join(path, "groups"), g)
			specs, err := d.seq(gn, gp)
			if err != nil {
				return err
			}
			var group []int
			for j, sn := range specs {
				hostNames, err := d.names(sn, index(gp, j))
				if err != nil {
					return err
				}
				for _, hn := range hostNames {
					h, ok := p.hostIndex[hn]
					if !ok {
						return d.errf(sn, index(gp, j), "%q: no such host", hn)
					}
					if owner[h] >= 0 {
						return d.errf(sn, index(gp, j), "host %s is already in group %d", hn, owner[h])
					}
					owner[h] = g
					group = append(group, h)
				}
			}
			if len(group) == 0 {
				return d.errf(gn, gp, "empty group")
			}
			ts.groups = append(ts.groups, group)
		}
		for h, o := range owner {
			if o < 0 {
				return d.errf(m["groups"], join(path, "groups"), "host %s is in no group (a level must cover every host)", p.hosts[h].Name)
			}
		}
		p.truthSpec = append(p.truthSpec, ts)
	}
	return nil
}

// buildResources creates the shared capacities in a fixed order: switch
// links in file order, then per host its link (up, down), its sockets'
// intra-socket paths and its inter-socket path.
func (p *Platform) buildResources() {
	add := func(name string, bw float64) int {
		p.resources = append(p.resources, Resource{Name: name, BandwidthBps: bw})
		return len(p.resources) - 1
	}
	p.linkAB = make([]int, len(p.links))
	p.linkBA = make([]int, len(p.links))
	for i, l := range p.links {
		if l.HalfDuplex {
			r := add(l.A+"<->"+l.B, l.BandwidthBps)
			p.linkAB[i], p.linkBA[i] = r, r
		} else {
			p.linkAB[i] = add(l.A+"->"+l.B, l.BandwidthBps)
			p.linkBA[i] = add(l.B+"->"+l.A, l.BandwidthBps)
		}
	}
	p.hostUp = make([]int, len(p.hosts))
	p.hostDown = make([]int, len(p.hosts))
	p.socketRes = make([][]int, len(p.hosts))
	p.interRes = make([]int, len(p.hosts))
	for h, host := range p.hosts {
		if host.Link.HalfDuplex {
			r := add(host.Name+"<->"+host.Switch, host.Link.BandwidthBps)
			p.hostUp[h], p.hostDown[h] = r, r
		} else {
			p.hostUp[h] = add(host.Name+"->"+host.Switch, host.Link.BandwidthBps)
			p.hostDown[h] = add(host.Switch+"->"+host.Name, host.Link.BandwidthBps)
		}
		t := host.Type
		p.socketRes[h] = make([]int, t.Sockets)
		for s := range t.Sockets {
			p.socketRes[h][s] = -1
			if t.IntraSocket != nil {
				p.socketRes[h][s] = add(fmt.Sprintf("%s/socket%d", host.Name, s), t.IntraSocket.BandwidthBps)
			}
		}
		p.interRes[h] = -1
		if t.InterSocket != nil && t.Sockets > 1 {
			p.interRes[h] = add(host.Name+"/inter-socket", t.InterSocket.BandwidthBps)
		}
	}
}
