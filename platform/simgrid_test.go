package platform

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestSimGridXMLShape(t *testing.T) {
	p := loadExample(t)
	common := []string{
		`<platform version="4.1">`,
		`<host id="a00" speed="1Gf" core="12"/>`,
		`<link id="nic_a00" bandwidth="125000000Bps" latency="0.00001s" sharing_policy="SPLITDUPLEX"/>`,
		`<link id="link0_torA_core" bandwidth="1250000000Bps" latency="0.000002s" sharing_policy="SPLITDUPLEX"/>`,
		`<prop id="network/TCP-gamma" value="4194304"/>`,
	}
	for _, c := range []struct {
		form   string
		write  func(io.Writer) error
		want   []string
		routes int
	}{
		// The switches form a tree: a route per host link and per switch
		// link, the rest is SimGrid's shortest path.
		{"zoned", p.WriteSimGrid, []string{
			`<zone id="two-racks" routing="DijkstraCache">`,
			`<router id="router_torA"/>`,
			`<route src="a00" dst="router_torA" symmetrical="YES"><link_ctn id="nic_a00" direction="UP"/></route>`,
			`<route src="router_torB" dst="router_core" symmetrical="YES"><link_ctn id="link1_torB_core" direction="UP"/></route>`,
		}, 30 + 2},
		{"full", p.WriteSimGridFull, []string{
			`<zone id="two-racks" routing="Full">`,
			`<route src="a00" dst="b00" symmetrical="YES"><link_ctn id="nic_a00" direction="UP"/><link_ctn id="link0_torA_core" direction="UP"/><link_ctn id="link1_torB_core" direction="DOWN"/><link_ctn id="nic_b00" direction="DOWN"/></route>`,
		}, 30 * 29 / 2},
	} {
		var buf bytes.Buffer
		if err := c.write(&buf); err != nil {
			t.Fatal(err)
		}
		s := buf.String()
		for _, want := range append(common, c.want...) {
			if !strings.Contains(s, want) {
				t.Errorf("%s export lacks %s", c.form, want)
			}
		}
		if n := strings.Count(s, "<route "); n != c.routes {
			t.Errorf("%s export: %d routes, want %d", c.form, n, c.routes)
		}
	}
}

// TestSimGridExportRoutes loads exports into SimGrid (when libsimgrid-dev
// and a C++ compiler are installed) and checks that SimGrid routes every
// sampled host pair over the same links, with the same bandwidths and
// latency, as Route does.
func TestSimGridExportRoutes(t *testing.T) {
	dir := t.TempDir()
	bin := buildSimGridProgram(t, dir, "testdata/simgrid/routes.cpp")
	half := mustParse(t, "half.yaml", tieHeader+`switches: [s, t, u]
links:
  - {between: [s, t], bandwidth: 100Mbps, latency: 1us, duplex: half}
  - {between: [u, t], bandwidth: 1Gbps, latency: 3us}
hosts:
  - {names: "hs[1-2]", switch: s, link: {bandwidth: 1Gbps, latency: 1us, duplex: half}}
  - {names: "ht[1-2]", switch: t, link: {bandwidth: 1Gbps, latency: 2us}}
  - {names: hu, switch: u, link: {bandwidth: 10Gbps, latency: 2us}}
`)
	// Not a tree: equal-latency paths s-a-t and s-b-t (the name rule picks
	// a) and a slower direct link, so the export lists SwitchPath's links
	// in zone routes instead of letting SimGrid choose.
	ring := mustParse(t, "ring.yaml", tieHeader+`switches: [s, t, b, a]
links:
  - {between: [s, b], bandwidth: 1Gbps, latency: 1us}
  - {between: [b, t], bandwidth: 1Gbps, latency: 1us}
  - {between: [s, a], bandwidth: 10Gbps, latency: 1us}
  - {between: [t, a], bandwidth: 10Gbps, latency: 1us, duplex: half}
  - {between: [s, t], bandwidth: 40Gbps, latency: 5us}
hosts:
  - {names: "hs[1-3]", switch: s, link: {bandwidth: 1Gbps, latency: 1us}}
  - {names: "ht[1-2]", switch: t, link: {bandwidth: 1Gbps, latency: 2us, duplex: half}}
  - {names: ha, switch: a, link: {bandwidth: 10Gbps, latency: 2us}}
`)
	platforms := []*Platform{half, ring, mustLoad(t, "zhu-2racks"), mustLoad(t, "bordeaux-2013"), mustLoad(t, "shirai-4clusters"), mustLoad(t, "dichev-n1")}
	for _, pw := range platforms {
		for _, form := range []string{"zoned", "full"} {
			p := pw
			checkSimGridRoutes(t, bin, dir, p, form)
		}
	}
}

// checkSimGridRoutes writes p in one form and compares SimGrid's routes of
// 300 random host pairs with Route's.
func checkSimGridRoutes(t *testing.T, bin, dir string, p *Platform, form string) {
	t.Helper()
	{
		xml := filepath.Join(dir, p.Name+"-"+form+".xml")
		f, err := os.Create(xml)
		if err != nil {
			t.Fatal(err)
		}
		write := p.WriteSimGrid
		if form == "full" {
			write = p.WriteSimGridFull
		}
		if err := write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		rng := rand.New(rand.NewPCG(7, uint64(len(p.Hosts()))))
		var pairs [][2]int
		n := len(p.Hosts())
		for len(pairs) < 300 {
			a, b := rng.IntN(n), rng.IntN(n)
			if a != b {
				pairs = append(pairs, [2]int{a, b})
			}
		}
		var in strings.Builder
		for _, pr := range pairs {
			fmt.Fprintf(&in, "%s %s\n", p.Hosts()[pr[0]].Name, p.Hosts()[pr[1]].Name)
		}
		cmd := exec.Command(bin, xml, "--log=root.thres:critical")
		cmd.Stdin = strings.NewReader(in.String())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s (%s): SimGrid: %v", p.Name, form, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(pairs) {
			t.Fatalf("%s: %d answers for %d pairs", p.Name, len(lines), len(pairs))
		}
		ids := p.SimGridLinkIDs()
		for i, line := range lines {
			f := strings.Fields(line)
			r := p.HostRoute(pairs[i][0], pairs[i][1])
			lat, _ := strconv.ParseFloat(f[2], 64)
			if math.Abs(lat-r.LatencyS) > 1e-12*r.LatencyS {
				t.Errorf("%s (%s): %s latency SimGrid %v, netaware %v", p.Name, form, line, lat, r.LatencyS)
			}
			var want []string
			for _, res := range r.Forward {
				want = append(want, fmt.Sprintf("%s@%s", ids[res], strconv.FormatFloat(p.Resources()[res].BandwidthBps, 'g', 17, 64)))
			}
			got := f[3:]
			for j := range got {
				// SimGrid prints bandwidths with 17 significant digits too;
				// normalise both through ParseFloat.
				name, bw, _ := strings.Cut(got[j], "@")
				v, _ := strconv.ParseFloat(bw, 64)
				got[j] = fmt.Sprintf("%s@%s", name, strconv.FormatFloat(v, 'g', 17, 64))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s (%s): %s->%s\nSimGrid  %v\nnetaware %v", p.Name, form, f[0], f[1], got, want)
			}
		}
	}
}

// buildSimGridProgram compiles a SimGrid program into dir, skipping the
// test when SimGrid or g++ is missing or under -short.
func buildSimGridProgram(t *testing.T, dir, src string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles a SimGrid program")
	}
	if exec.Command("pkg-config", "--exists", "simgrid").Run() != nil {
		t.Skip("SimGrid not installed (apt-get install libsimgrid-dev)")
	}
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "simgrid").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".cpp"))
	args := append([]string{"-O0", "-o", bin, src}, strings.Fields(string(flags))...)
	if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("g++ %s: %v\n%s", src, err, out)
	}
	return bin
}

// TestSimGridZonedSameTimes runs one pattern of 300 concurrent flows
// through SimGrid on the zoned and on the full export of a generated
// three-level cluster of 96 hosts (and of 512 with
// NETAWARE_SIMGRID_LARGE=1; its full export is 33 MB) and requires every
// flow's completion time to be the same to the last printed digit: the
// zoned form must route exactly as the full one, so that SimGrid's solver
// sees the same links.
func TestSimGridZonedSameTimes(t *testing.T) {
	dir := t.TempDir()
	bin := buildSimGridProgram(t, dir, "../tools/simgrid/flows.cpp")
	sizes := []int{96}
	if os.Getenv("NETAWARE_SIMGRID_LARGE") != "" {
		sizes = append(sizes, 512)
	}
	for _, hosts := range sizes {
		spec := ClusterSpec{Name: fmt.Sprintf("three-level-%d", hosts), Hosts: hosts, HostsPerLeaf: 8, LeavesPerSpine: 4,
			Sockets: 1, CoresPerSocket: 1, NICBandwidth: "1Gbps", NICLatency: "5us", Jitter: 0.02, Seed: 3}
		y, err := spec.YAML()
		if err != nil {
			t.Fatal(err)
		}
		p := mustParse(t, spec.Name+".yaml", string(y))
		rng := rand.New(rand.NewPCG(16, uint64(hosts)))
		var pat strings.Builder
		for i := range 300 {
			a, b := rng.IntN(hosts), rng.IntN(hosts-1)
			if b >= a {
				b++
			}
			fmt.Fprintf(&pat, "%d %s %s %d %g\n", i, p.Hosts()[a].Name, p.Hosts()[b].Name, 10_000+rng.IntN(20_000_000), float64(rng.IntN(50))*1e-3)
		}
		patFile := filepath.Join(dir, spec.Name+".txt")
		if err := os.WriteFile(patFile, []byte(pat.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var outs [2]string
		for i, write := range []func(io.Writer) error{p.WriteSimGrid, p.WriteSimGridFull} {
			var xml bytes.Buffer
			if err := write(&xml); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.xml", spec.Name, i))
			if err := os.WriteFile(file, xml.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, file, patFile, "--log=root.thres:critical").Output()
			if err != nil {
				t.Fatalf("%s: SimGrid: %v", spec.Name, err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			sort.Strings(lines)
			if len(lines) != 300 {
				t.Fatalf("%s: SimGrid printed %d completions for 300 flows", spec.Name, len(lines))
			}
			outs[i] = strings.Join(lines, "\n")
			t.Logf("%s: export %d: %d bytes", spec.Name, i, xml.Len())
		}
		if outs[0] != outs[1] {
			z, f := strings.Split(outs[0], "\n"), strings.Split(outs[1], "\n")
			for i := range z {
				if z[i] != f[i] {
					t.Fatalf("%s: zoned export gives %q, full export %q", spec.Name, z[i], f[i])
				}
			}
		}
	}
}
