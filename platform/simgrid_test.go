package platform

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSimGridXMLShape(t *testing.T) {
	p := loadExample(t)
	var buf bytes.Buffer
	if err := p.WriteSimGrid(&buf); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{
		`<platform version="4.1">`,
		`<host id="a00" speed="1Gf" core="12"/>`,
		`<link id="nic_a00" bandwidth="125000000Bps" latency="0.00001s" sharing_policy="SPLITDUPLEX"/>`,
		`<link id="link0_torA_core" bandwidth="1250000000Bps" latency="0.000002s" sharing_policy="SPLITDUPLEX"/>`,
		`<route src="a00" dst="b00" symmetrical="YES"><link_ctn id="nic_a00" direction="UP"/><link_ctn id="link0_torA_core" direction="UP"/><link_ctn id="link1_torB_core" direction="DOWN"/><link_ctn id="nic_b00" direction="DOWN"/></route>`,
		`<prop id="network/TCP-gamma" value="4194304"/>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("export lacks %s", want)
		}
	}
	if n, want := strings.Count(s, "<route "), 30*29/2; n != want {
		t.Errorf("%d routes, want %d", n, want)
	}
}

// TestSimGridExportRoutes loads exports into SimGrid (when libsimgrid-dev
// and a C++ compiler are installed) and checks that SimGrid routes every
// sampled host pair over the same links, with the same bandwidths and
// latency, as Route does.
func TestSimGridExportRoutes(t *testing.T) {
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
	dir := t.TempDir()
	bin := filepath.Join(dir, "routes")
	args := append([]string{"-O0", "-o", bin, "testdata/simgrid/routes.cpp"}, strings.Fields(string(flags))...)
	if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	half := mustParse(t, "half.yaml", tieHeader+`switches: [s, t, u]
links:
  - {between: [s, t], bandwidth: 100Mbps, latency: 1us, duplex: half}
  - {between: [u, t], bandwidth: 1Gbps, latency: 3us}
hosts:
  - {names: "hs[1-2]", switch: s, link: {bandwidth: 1Gbps, latency: 1us, duplex: half}}
  - {names: "ht[1-2]", switch: t, link: {bandwidth: 1Gbps, latency: 2us}}
  - {names: hu, switch: u, link: {bandwidth: 10Gbps, latency: 2us}}
`)
	platforms := []*Platform{half, mustLoad(t, "zhu-2racks"), mustLoad(t, "bordeaux-2013"), mustLoad(t, "shirai-4clusters"), mustLoad(t, "dichev-n1")}
	for _, p := range platforms {
		xml := filepath.Join(dir, p.Name+".xml")
		f, err := os.Create(xml)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WriteSimGrid(f); err != nil {
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
			t.Fatalf("%s: SimGrid: %v", p.Name, err)
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
				t.Errorf("%s: %s latency SimGrid %v, netaware %v", p.Name, line, lat, r.LatencyS)
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
				t.Errorf("%s: %s->%s\nSimGrid  %v\nnetaware %v", p.Name, f[0], f[1], got, want)
			}
		}
	}
}
