package emu

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"netaware/platform"
)

func parse(t *testing.T, src string) *platform.Platform {
	t.Helper()
	p, err := platform.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Two switches, one two-core host on each, two ranks per host in cyclic order.
const twoHosts = `version: 1
name: t
switches: [s0, s1]
links:
  - {between: [s0, s1], bandwidth: 20Mbps, latency: 3us}
host_types:
  duo: {cores_per_socket: 2, intra_socket: {bandwidth: 10GBps, latency: 0.5us}}
hosts:
  - {names: a0, switch: s0, type: duo, link: {bandwidth: 100Mbps, latency: 10us}}
  - {names: b0, switch: s1, type: duo, link: {bandwidth: 1Gbps, latency: 10us}}
ranks:
  per_host: 2
  order: cyclic
`

func TestPlanOfTwoHostsIsExact(t *testing.T) {
	pl, err := NewPlan(parse(t, twoHosts), Options{Prefix: "ne0"})
	if err != nil {
		t.Fatal(err)
	}
	sub := Subnet("ne0")
	b := sub.Addr().As4()
	a1 := netip.AddrFrom4([4]byte{b[0], b[1], 0, 1}).String()
	a2 := netip.AddrFrom4([4]byte{b[0], b[1], 0, 2}).String()
	if pl.Subnet != sub.String() {
		t.Errorf("subnet %s, want %s", pl.Subnet, sub)
	}
	// cyclic: rank r on host r mod 2
	if want := []int{0, 1, 0, 1}; !reflect.DeepEqual(pl.Ranks, want) {
		t.Errorf("ranks %v, want %v", pl.Ranks, want)
	}
	wantHosts := []HostPlan{
		{Name: "a0", Switch: "s0", Namespace: "ne0-h0", UTS: "/run/netaware-emu/ne0/uts/h0", Address: a1, Ranks: []int{0, 2}},
		{Name: "b0", Switch: "s1", Namespace: "ne0-h1", UTS: "/run/netaware-emu/ne0/uts/h1", Address: a2, Ranks: []int{1, 3}},
	}
	if !reflect.DeepEqual(pl.Hosts, wantHosts) {
		t.Errorf("hosts\n%+v\nwant\n%+v", pl.Hosts, wantHosts)
	}
	// 100 Mbit = 12.5 MB/s: bucket 64 KiB (1 ms would be 12.5 kB), queue
	// 64 KiB + 50 ms (625 kB); 1 Gbit: bucket 1 ms = 125 kB, queue 125 kB +
	// 6.25 MB; 20 Mbit: 64 KiB + 50 ms (125 kB).
	want := []string{
		"ip netns add ne0-s0",
		"ip -n ne0-s0 link set lo up",
		"ip -n ne0-s0 link add br0 type bridge stp_state 0",
		"ip -n ne0-s0 link set br0 up",
		"ip netns add ne0-s1",
		"ip -n ne0-s1 link set lo up",
		"ip -n ne0-s1 link add br0 type bridge stp_state 0",
		"ip -n ne0-s1 link set br0 up",
		"ip netns add ne0-h0",
		"ip -n ne0-h0 link set lo up",
		"unshare --uts=/run/netaware-emu/ne0/uts/h0 hostname a0",
		"ip link add eth0 netns ne0-h0 type veth peer name ne0p0 netns ne0-s0",
		"ip -n ne0-h0 addr add " + a1 + "/16 dev eth0",
		"ip -n ne0-h0 link set eth0 up",
		"ip -n ne0-s0 link set ne0p0 master br0 up",
		"tc -n ne0-h0 qdisc add dev eth0 root handle 1: tbf rate 100000000bit burst 4096 limit 629096",
		"tc -n ne0-s0 qdisc add dev ne0p0 root handle 1: tbf rate 100000000bit burst 4096 limit 629096",
		"ip netns add ne0-h1",
		"ip -n ne0-h1 link set lo up",
		"unshare --uts=/run/netaware-emu/ne0/uts/h1 hostname b0",
		"ip link add eth0 netns ne0-h1 type veth peer name ne0p1 netns ne0-s1",
		"ip -n ne0-h1 addr add " + a2 + "/16 dev eth0",
		"ip -n ne0-h1 link set eth0 up",
		"ip -n ne0-s1 link set ne0p1 master br0 up",
		"tc -n ne0-h1 qdisc add dev eth0 root handle 1: tbf rate 1000000000bit burst 25000 limit 6275000",
		"tc -n ne0-s1 qdisc add dev ne0p1 root handle 1: tbf rate 1000000000bit burst 25000 limit 6275000",
		"ip link add ne0t0a netns ne0-s0 type veth peer name ne0t0b netns ne0-s1",
		"ip -n ne0-s0 link set ne0t0a master br0 up",
		"ip -n ne0-s1 link set ne0t0b master br0 up",
		"tc -n ne0-s0 qdisc add dev ne0t0a root handle 1: tbf rate 20000000bit burst 4096 limit 129096",
		"tc -n ne0-s1 qdisc add dev ne0t0b root handle 1: tbf rate 20000000bit burst 4096 limit 129096",
	}
	var got []string
	for _, s := range pl.Steps {
		got = append(got, strings.Join(s, " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(pl.Warnings) != 0 || len(pl.Dropped) != 0 {
		t.Errorf("warnings %v, dropped %v: want none", pl.Warnings, pl.Dropped)
	}
}

func TestPlanWithNetemDelaysEachDirectionUnderTheRateLimit(t *testing.T) {
	pl, err := NewPlan(parse(t, twoHosts), Options{Prefix: "ne0", Netem: true, Burst: 32000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range pl.Steps {
		if s[0] == "tc" && s[2] == "ne0-h0" {
			got = append(got, strings.Join(s, " "))
		}
	}
	want := []string{
		"tc -n ne0-h0 qdisc add dev eth0 root handle 1: netem delay 10us limit 100000",
		"tc -n ne0-h0 qdisc add dev eth0 parent 1:1 handle 2: tbf rate 100000000bit burst 32000 limit 657000",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host 0's qdiscs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPlanPlacementOverrideUsesThePlatformsPlacement(t *testing.T) {
	pl, err := NewPlan(parse(t, twoHosts), Options{Prefix: "ne0", PerHost: 2, Order: platform.OrderBlock})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 0, 1, 1}; !reflect.DeepEqual(pl.Ranks, want) {
		t.Errorf("block ranks %v, want %v", pl.Ranks, want)
	}
	if _, err := NewPlan(parse(t, twoHosts), Options{Prefix: "ne0", PerHost: 3}); err == nil {
		t.Error("3 ranks on a 2-core host: no error")
	}
}

const triangle = `version: 1
name: tri
switches: [s0, s1, s2]
links:
  - {between: [s0, s1], bandwidth: 1Gbps, latency: 1us}
  - {between: [s1, s2], bandwidth: 1Gbps, latency: 1us}
  - {between: [s0, s2], bandwidth: 1Gbps, latency: %s}
host_types:
  node: {cores_per_socket: 1}
hosts:
  - {names: a0, switch: s0, type: node, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: b0, switch: s1, type: node, link: {bandwidth: 1Gbps, latency: 1us, duplex: %s}}
  - {names: c0, switch: s2, type: node, link: {bandwidth: 1Gbps, latency: 1us}}
`

func TestPlanDropsUnusedSwitchLinksAndRefusesLoops(t *testing.T) {
	// s0-s2 at 10 us is slower than s0-s1-s2 at 2 us: no route uses it.
	pl, err := NewPlan(parse(t, fmt.Sprintf(triangle, "10us", "full")), Options{Prefix: "ne0"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []DroppedLink{{A: "s0", B: "s2", Line: 7}}; !reflect.DeepEqual(pl.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", pl.Dropped, want)
	}
	if len(pl.Links) != 3+2 {
		t.Errorf("%d links, want 3 host links and 2 switch links", len(pl.Links))
	}
	// At 1 us every link is some pair's route: a loop of bridges.
	_, err = NewPlan(parse(t, fmt.Sprintf(triangle, "1us", "full")), Options{Prefix: "ne0"})
	if err == nil || !strings.Contains(err.Error(), "s0-s2 (line 7) closes a loop") {
		t.Errorf("loop: error %v, want one naming link s0-s2 at line 7", err)
	}
}

func TestPlanWarnsAboutHalfDuplex(t *testing.T) {
	pl, err := NewPlan(parse(t, fmt.Sprintf(triangle, "10us", "half")), Options{Prefix: "ne0"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range pl.Warnings {
		if strings.Contains(w, "b0-s1 is half duplex") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q: want one about b0-s1's half duplex", pl.Warnings)
	}
}

func TestValidPrefix(t *testing.T) {
	for _, p := range []string{"a", "ne1", "abc123"} {
		if err := ValidPrefix(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "1ab", "ne-1", "Ne1", "abcdefg", "a/b", "a b"} {
		if err := ValidPrefix(p); err == nil {
			t.Errorf("%q: accepted", p)
		}
	}
	if _, err := NewPlan(parse(t, twoHosts), Options{Prefix: "toolong"}); err == nil {
		t.Error("NewPlan accepted a 7-character prefix")
	}
}

func TestPlanNamesFitInterfaceNames(t *testing.T) {
	// 300 hosts and a chain of 12 switches: the longest veth names.
	var b strings.Builder
	b.WriteString("version: 1\nname: big\nswitches: [")
	for s := range 12 {
		if s > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "s%d", s)
	}
	b.WriteString("]\nlinks:\n")
	for s := 1; s < 12; s++ {
		fmt.Fprintf(&b, "  - {between: [s%d, s%d], bandwidth: 1Gbps, latency: 1us}\n", s-1, s)
	}
	b.WriteString("host_types:\n  node: {cores_per_socket: 1}\nhosts:\n")
	for s := range 12 {
		fmt.Fprintf(&b, "  - {names: \"h%d-[00-24]\", switch: s%d, type: node, link: {bandwidth: 1Gbps, latency: 1us}}\n", s, s)
	}
	pl, err := NewPlan(parse(t, b.String()), Options{Prefix: "abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range pl.Links {
		for _, d := range []string{l.NsA + "/" + l.DevA, l.NsB + "/" + l.DevB} {
			dev := d[strings.IndexByte(d, '/')+1:]
			if len(dev) > 15 {
				t.Errorf("interface %s: %d characters, Linux allows 15", d, len(dev))
			}
			if seen[d] {
				t.Errorf("interface %s twice", d)
			}
			seen[d] = true
		}
	}
	addrs := map[string]bool{}
	sub := Subnet("abcdef")
	for _, h := range pl.Hosts {
		a := netip.MustParseAddr(h.Address)
		if !sub.Contains(a) || addrs[h.Address] {
			t.Errorf("host %s: address %s outside %s or repeated", h.Name, a, sub)
		}
		addrs[h.Address] = true
	}
	if len(pl.Hosts) != 300 || len(pl.Links) != 311 {
		t.Errorf("%d hosts, %d links: want 300 and 311", len(pl.Hosts), len(pl.Links))
	}
}

func TestSubnetIsATenSlashSixteenPerPrefix(t *testing.T) {
	seen := map[netip.Prefix]int{}
	for i := range 40 {
		p := fmt.Sprintf("ne%d", i)
		s := Subnet(p)
		b := s.Addr().As4()
		if s.Bits() != 16 || b[0] != 10 || b[1] < 64 || b[1] >= 192 || b[2] != 0 || b[3] != 0 {
			t.Errorf("%s: subnet %s, want 10.64-191.0.0/16", p, s)
		}
		if Subnet(p) != s {
			t.Errorf("%s: subnet not deterministic", p)
		}
		seen[s]++
	}
	// 40 prefixes over 128 subnets: a hash spreads them (a constant would give 1).
	if len(seen) < 25 {
		t.Errorf("40 prefixes share only %d subnets", len(seen))
	}
}

// Two prefixes whose hashes meet (as "m11c" and "lb26" did) must not get
// one subnet while both clusters are up: rsh-agent finds a host by its
// address in any cluster. The second takes the next free /16; with all
// 128 taken, the plan is refused with a message.
func TestPlanAvoidsSubnetsOfOtherClusters(t *testing.T) {
	own := Subnet("ne0")
	next := subnetAt(uint32(own.Addr().As4()[1]) - 64 + 1)
	after := subnetAt(uint32(own.Addr().As4()[1]) - 64 + 2)
	for _, c := range []struct {
		avoid []netip.Prefix
		want  netip.Prefix
	}{
		{nil, own},
		{[]netip.Prefix{next}, own},
		{[]netip.Prefix{own}, next},
		{[]netip.Prefix{next, own}, after},
	} {
		pl, err := NewPlan(parse(t, twoHosts), Options{Prefix: "ne0", Avoid: c.avoid})
		if err != nil {
			t.Fatal(err)
		}
		if pl.Subnet != c.want.String() || pl.Hosts[0].Address != c.want.Addr().Next().String() {
			t.Errorf("avoiding %v: subnet %s, host a0 at %s; want %s", c.avoid, pl.Subnet, pl.Hosts[0].Address, c.want)
		}
	}
	var all []netip.Prefix
	for i := range uint32(subnets) {
		all = append(all, subnetAt(i))
	}
	if _, err := NewPlan(parse(t, twoHosts), Options{Prefix: "ne0", Avoid: all}); err == nil || !strings.Contains(err.Error(), "every one of the 128 subnets") {
		t.Errorf("every subnet taken: error %v", err)
	}
}

func TestPlanRefusesOverlongHostNames(t *testing.T) {
	long := strings.Repeat("x", 65)
	_, err := NewPlan(parse(t, strings.Replace(twoHosts, "names: a0", "names: "+long, 1)), Options{Prefix: "ne0"})
	if err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("65-byte host name: error %v, want one naming line 9", err)
	}
}

func TestPrintOutputsPrefixesOnlyWhenSeveralRanksWrite(t *testing.T) {
	write := func(dir string, files map[string]string) {
		for r := range 3 {
			for _, ext := range []string{".out", ".err"} {
				name := fmt.Sprint(r) + ext
				if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	dir := t.TempDir()
	write(dir, map[string]string{"1.out": "one\ntwo", "1.err": "warn\n"})
	var out, errw strings.Builder
	if err := printOutputs(dir, 3, &out, &errw); err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\ntwo\n" || errw.String() != "warn\n" {
		t.Errorf("one rank writing: stdout %q stderr %q, want them unprefixed", out.String(), errw.String())
	}
	write(dir, map[string]string{"0.out": "zero\n", "2.err": "e2\n", "2.out": "x\ny\n"})
	out.Reset()
	errw.Reset()
	if err := printOutputs(dir, 3, &out, &errw); err != nil {
		t.Fatal(err)
	}
	if out.String() != "[0] zero\n[2] x\n[2] y\n" || errw.String() != "[2] e2\n" {
		t.Errorf("two ranks writing: stdout %q stderr %q", out.String(), errw.String())
	}
}

func TestTestdataPlatformsPlan(t *testing.T) {
	for file, want := range map[string]struct {
		hosts, switchLinks int
		level              string
		groups             int
	}{
		"star-3x4.yaml":            {12, 2, "switch", 3},
		"star-2x6.yaml":            {12, 1, "switch", 2},
		"chain-3x4.yaml":           {12, 2, "switch", 3},
		"chain-4x3.yaml":           {12, 3, "switch", 4},
		"two-nic-generations.yaml": {12, 1, "switch", 2},
		"zero-latency-split.yaml":  {8, 1, "bandwidth-cluster", 2},
		"test-2x2.yaml":            {4, 1, "switch", 2},
	} {
		p, err := platform.Load(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		pl, err := NewPlan(p, Options{Prefix: "ne0"})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if len(pl.Hosts) != want.hosts || len(pl.Links) != want.hosts+want.switchLinks || len(pl.Ranks) != want.hosts {
			t.Errorf("%s: %d hosts, %d links, %d ranks", file, len(pl.Hosts), len(pl.Links), len(pl.Ranks))
		}
		found := false
		for _, l := range p.Truth() {
			if l.Name == want.level {
				found = len(l.Groups) == want.groups
			}
		}
		if !found {
			t.Errorf("%s: no truth level %s of %d groups in %v", file, want.level, want.groups, p.Truth())
		}
	}
}
