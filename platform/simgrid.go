package platform

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteSimGrid writes the platform's network as a SimGrid platform file
// (DTD version 4.1): one SimGrid host per platform host (speed 1Gf, one core
// per core of its host type), one link per platform link and host link
// (SPLITDUPLEX for full duplex, SHARED for half duplex), routed as Route
// routes. The file grows linearly with the hosts: each switch becomes a
// Cluster zone holding its hosts (whose host links are the zone's private
// links) and a router, and the switches' zones are joined by one zone
// route per switch link in a Dijkstra zone when the switches form a tree
// (where the route between two switches is the only path), else by one
// zone route per pair of switches with hosts, in a Full zone, listing
// SwitchPath's links. WriteSimGridFull writes the former form, an
// explicit route per host pair (quadratic in the hosts: 508 MB for 2,048
// hosts); SimGrid routes both alike (TestSimGridExportRoutes,
// TestSimGridZonedSameTimes).
//
// Not exported: the intra- and inter-socket memory paths (SimGrid sees one
// host per node), per-message overheads and noise. TCP settings become
// SimGrid configuration: network/crosstraffic, and network/TCP-gamma for a
// window bound.
func (p *Platform) WriteSimGrid(w io.Writer) error {
	zone, router, ok := p.simgridZoneNames()
	if !ok {
		// A host is named like a zone or router id: keep the names apart
		// at the price of the quadratic form.
		return p.WriteSimGridFull(w)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	pr := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p.simgridPreamble(pr)
	linkDecl := func(indent string) {
		for i, l := range p.links {
			pr("%s<link id=\"%s\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n",
				indent, simgridLink(i, l), fnum(l.BandwidthBps), fnum(l.LatencyS), sharing(l.LinkSpec))
		}
	}
	hostDecl := func(indent string, h int) {
		host := p.hosts[h]
		pr("%s<host id=\"%s\" speed=\"1Gf\" core=\"%d\"/>\n", indent, host.Name, host.Type.Cores())
		pr("%s<link id=\"%s\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n",
			indent, simgridHostLink(host.Name), fnum(host.Link.BandwidthBps), fnum(host.Link.LatencyS), sharing(host.Link))
	}
	linkRef := func(li, from int) string {
		dir := "UP" // from end A to end B
		if p.links[li].a != from {
			dir = "DOWN"
		}
		return linkCtn(simgridLink(li, p.links[li]), p.links[li].LinkSpec, dir)
	}
	if p.switchTree() {
		// One path between two switches: SimGrid's shortest path over
		// hosts and routers is Route's, whatever its edge costs. Routes
		// are declared per edge; DijkstraCache keeps each source's tree.
		pr("  <zone id=\"%s\" routing=\"DijkstraCache\">\n", xmlAttr(p.Name))
		for h := range p.hosts {
			hostDecl("    ", h)
		}
		for s := range p.switches {
			pr("    <router id=\"%s\"/>\n", router[s])
		}
		linkDecl("    ")
		for _, host := range p.hosts {
			pr("    <route src=\"%s\" dst=\"%s\" symmetrical=\"YES\">%s</route>\n",
				host.Name, router[host.sw], linkCtn(simgridHostLink(host.Name), host.Link, "UP"))
		}
		for i, l := range p.links {
			pr("    <route src=\"%s\" dst=\"%s\" symmetrical=\"YES\">%s</route>\n", router[l.a], router[l.b], linkRef(i, l.a))
		}
		pr("  </zone>\n</platform>\n")
		return bw.Flush()
	}
	// Several paths: a Cluster zone per switch with hosts (its hosts'
	// links are the zone's private links, its router the gateway), joined
	// by SwitchPath's links, one zone route per pair of such switches.
	pr("  <zone id=\"%s\" routing=\"Full\">\n", xmlAttr(p.Name))
	bySwitch := make([][]int, len(p.switches))
	for h := range p.hosts {
		bySwitch[p.hosts[h].sw] = append(bySwitch[p.hosts[h].sw], h)
	}
	for s := range p.switches {
		if len(bySwitch[s]) == 0 {
			continue
		}
		pr("    <zone id=\"%s\" routing=\"Cluster\">\n", zone[s])
		pr("      <router id=\"%s\"/>\n", router[s])
		for _, h := range bySwitch[s] {
			host := p.hosts[h]
			hostDecl("      ", h)
			id := simgridHostLink(host.Name)
			up, down := id+"_UP", id+"_DOWN"
			if host.Link.HalfDuplex {
				up, down = id, id
			}
			pr("      <host_link id=\"%s\" up=\"%s\" down=\"%s\"/>\n", host.Name, up, down)
		}
		pr("    </zone>\n")
	}
	// SimGrid's DTD wants a zone's own links after its sub-zones.
	linkDecl("    ")
	for a := range p.switches {
		for b := a + 1; b < len(p.switches); b++ {
			if len(bySwitch[a]) == 0 || len(bySwitch[b]) == 0 {
				continue
			}
			links, nodes := p.SwitchPath(a, b)
			pr("    <zoneRoute src=\"%s\" dst=\"%s\" gw_src=\"%s\" gw_dst=\"%s\" symmetrical=\"YES\">", zone[a], zone[b], router[a], router[b])
			for i, li := range links {
				pr("%s", linkRef(li, nodes[i]))
			}
			pr("</zoneRoute>\n")
		}
	}
	pr("  </zone>\n</platform>\n")
	return bw.Flush()
}

// switchTree reports whether the switches and their links form a tree:
// connected (as Parse requires) with one link fewer than switches, so that
// there is one path between two switches and SimGrid's shortest path is
// Route's.
func (p *Platform) switchTree() bool {
	return len(p.links) == len(p.switches)-1
}

// simgridZoneNames gives each switch's zone and router id; ok is false
// when one of them is also a host's name.
func (p *Platform) simgridZoneNames() (zone, router []string, ok bool) {
	zone, router = make([]string, len(p.switches)), make([]string, len(p.switches))
	for s, name := range p.switches {
		zone[s], router[s] = "zone_"+name, "router_"+name
		if _, clash := p.hostIndex[zone[s]]; clash {
			return nil, nil, false
		}
		if _, clash := p.hostIndex[router[s]]; clash {
			return nil, nil, false
		}
	}
	return zone, router, true
}

func (p *Platform) simgridPreamble(pr func(format string, a ...any)) {
	pr("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n")
	pr("<!-- Generated by netaware from platform %s (%s).\n", xmlComment(p.Name), xmlComment(p.File))
	pr("     Not represented: intra/inter-socket paths, overheads, noise.\n")
	pr("     For a pure max-min comparison run with -cfg=network/model:CM02. -->\n")
	pr("<platform version=\"4.1\">\n")
	pr("  <config>\n")
	cross := "no"
	if p.tcp.CrossTraffic > 0 {
		cross = "yes"
	}
	pr("    <prop id=\"network/crosstraffic\" value=\"%s\"/>\n", cross)
	if p.tcp.WindowBytes > 0 {
		pr("    <prop id=\"network/TCP-gamma\" value=\"%d\"/>\n", p.tcp.WindowBytes)
	}
	pr("  </config>\n")
}

// WriteSimGridFull writes the platform as WriteSimGrid does, but in one
// Full zone with an explicit route between every pair of hosts listing the
// links that Route crosses. Routes are declared once per pair and
// symmetrical, as netaware's routing is symmetric; SimGrid flips UP/DOWN
// on the way back. The file grows with the square of the host count
// (about 45 MB for 576 hosts); it is the reference the zoned form is
// checked against.
func (p *Platform) WriteSimGridFull(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	pr := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p.simgridPreamble(pr)
	pr("  <zone id=\"%s\" routing=\"Full\">\n", xmlAttr(p.Name))
	for _, h := range p.hosts {
		pr("    <host id=\"%s\" speed=\"1Gf\" core=\"%d\"/>\n", h.Name, h.Type.Cores())
	}
	for _, h := range p.hosts {
		pr("    <link id=\"%s\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n",
			simgridHostLink(h.Name), fnum(h.Link.BandwidthBps), fnum(h.Link.LatencyS), sharing(h.Link))
	}
	for i, l := range p.links {
		pr("    <link id=\"%s\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n",
			simgridLink(i, l), fnum(l.BandwidthBps), fnum(l.LatencyS), sharing(l.LinkSpec))
	}
	for a := range p.hosts {
		for b := a + 1; b < len(p.hosts); b++ {
			pr("    <route src=\"%s\" dst=\"%s\" symmetrical=\"YES\">", p.hosts[a].Name, p.hosts[b].Name)
			// Host links run UP from host to switch.
			pr("%s", linkCtn(simgridHostLink(p.hosts[a].Name), p.hosts[a].Link, "UP"))
			links, nodes := p.SwitchPath(p.hosts[a].sw, p.hosts[b].sw)
			for i, li := range links {
				dir := "UP" // from end A to end B
				if p.links[li].a != nodes[i] {
					dir = "DOWN"
				}
				pr("%s", linkCtn(simgridLink(li, p.links[li]), p.links[li].LinkSpec, dir))
			}
			pr("%s", linkCtn(simgridHostLink(p.hosts[b].Name), p.hosts[b].Link, "DOWN"))
			pr("</route>\n")
		}
	}
	pr("  </zone>\n</platform>\n")
	return bw.Flush()
}

// SimGridLinkIDs maps each of Resources() to the SimGrid link id and
// direction ("UP", "DOWN", or "" for a SHARED link) that WriteSimGrid uses
// for it; memory-path resources map to "". Validators use it to compare
// routes.
func (p *Platform) SimGridLinkIDs() []string {
	ids := make([]string, len(p.resources))
	for h, host := range p.hosts {
		id := simgridHostLink(host.Name)
		if host.Link.HalfDuplex {
			ids[p.hostUp[h]] = id
		} else {
			ids[p.hostUp[h]], ids[p.hostDown[h]] = id+"_UP", id+"_DOWN"
		}
	}
	for i, l := range p.links {
		id := simgridLink(i, l)
		if l.HalfDuplex {
			ids[p.linkAB[i]] = id
		} else {
			ids[p.linkAB[i]], ids[p.linkBA[i]] = id+"_UP", id+"_DOWN"
		}
	}
	return ids
}

func simgridHostLink(host string) string { return "nic_" + host }

func simgridLink(i int, l Link) string { return fmt.Sprintf("link%d_%s_%s", i, l.A, l.B) }

func sharing(l LinkSpec) string {
	if l.HalfDuplex {
		return "SHARED"
	}
	return "SPLITDUPLEX"
}

func linkCtn(id string, l LinkSpec, dir string) string {
	if l.HalfDuplex {
		return fmt.Sprintf("<link_ctn id=\"%s\"/>", id)
	}
	return fmt.Sprintf("<link_ctn id=\"%s\" direction=\"%s\"/>", id, dir)
}

// fnum prints a float exactly, without an exponent, as SimGrid's unit
// parser expects a plain number before the unit.
func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// xmlAttr escapes free text for an attribute value. Host and switch names
// need no escaping: checkName keeps XML metacharacters out of them.
func xmlAttr(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// xmlComment keeps free text from closing the comment it is placed in.
func xmlComment(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && i+1 < len(s) && s[i+1] == '-' {
			out = append(out, '-', ' ')
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
