package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"netaware/topo"
)

// TestSlurmctldLoadsTopologyConf hands the topology.conf that discover
// writes to a real slurmctld (topology/tree plugin) and checks that
// 'scontrol show topology' lists every switch with the nodes, child
// switches, level and link speed netaware wrote. Two discoveries on
// simulated platforms: two switches under a trunk (standard level, so the
// bandwidth map gives link speeds) and four sites of 16 hosts each (a deep
// hierarchy with switches that have a single child).
func TestSlurmctldLoadsTopologyConf(t *testing.T) {
	slurmctld, scontrol := needSlurm(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"infer-2switches", []string{"--platform", "testdata/infer-2switches.yaml", "--level", "standard"}},
		{"grid5000-4sites", []string{"--platform", "grid5000-4sites", "--level", "fast"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			if _, err := runTopoCLI(t, append([]string{"discover", "--out", out}, c.args...)...); err != nil {
				t.Fatalf("discover: %v", err)
			}
			conf, err := os.ReadFile(filepath.Join(out, "topology.conf"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := topo.ReadSlurm(bytes.NewReader(conf))
			if err != nil {
				t.Fatal(err)
			}
			tp, err := topo.ReadFile(filepath.Join(out, "topology.json"))
			if err != nil {
				t.Fatal(err)
			}
			_, hosts, err := tp.HostPartition()
			if err != nil {
				t.Fatal(err)
			}
			got, complaints := showTopology(t, slurmctld, scontrol, conf, hosts)
			for _, c := range complaints {
				t.Errorf("slurmctld: %s", c)
			}
			checkSlurmTopology(t, want, got)
			if c.name == "infer-2switches" && !strings.Contains(string(conf), "LinkSpeed=") {
				t.Errorf("no link speeds although the bandwidth map ran:\n%s", conf)
			}
		})
	}
}

// The test above notices what slurmctld dislikes: a topology.conf that
// names a node slurm.conf lacks and leaves a node under no switch is loaded
// with complaints naming both, and one whose switch names an unknown child
// stops slurmctld.
func TestSlurmctldComplaintsAreSeen(t *testing.T) {
	slurmctld, scontrol := needSlurm(t)
	conf := []byte("SwitchName=s0 Nodes=n[1-2],zz9\nSwitchName=s1 Switches=s0\n")
	_, complaints := showTopology(t, slurmctld, scontrol, conf, []string{"n1", "n2", "n3"})
	all := strings.Join(complaints, "\n")
	if !strings.Contains(all, "zz9") || !strings.Contains(all, "n3") {
		t.Errorf("complaints do not name unknown node zz9 and n3 under no switch:\n%s", all)
	}
	// A switch naming a child switch that does not exist is fatal: the
	// start fails, where the same slurm.conf without a topology starts.
	if _, _, err := startSlurmctld(t, slurmctld, scontrol, []byte("SwitchName=s0 Nodes=n[1-3]\nSwitchName=s1 Switches=s9\n"), []string{"n1", "n2", "n3"}); err == nil || !strings.Contains(err.Error(), "s9") {
		t.Errorf("slurmctld with an unknown child switch: %v", err)
	}
	if _, _, err := startSlurmctld(t, slurmctld, scontrol, nil, []string{"n1", "n2", "n3"}); err != nil {
		t.Errorf("slurmctld without a topology: %v", err)
	}
}

// needSlurm returns the paths of slurmctld and scontrol or skips the test.
func needSlurm(t *testing.T) (slurmctld, scontrol string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts slurmctld")
	}
	var err error
	if slurmctld, err = exec.LookPath("slurmctld"); err != nil {
		// Debian installs it in /usr/sbin, which a user's PATH may lack.
		if _, e := os.Stat("/usr/sbin/slurmctld"); e != nil {
			t.Skip("slurmctld not installed (Debian/Ubuntu: apt-get install slurm-wlm): cannot check topology.conf with a real Slurm")
		}
		slurmctld = "/usr/sbin/slurmctld"
	}
	if scontrol, err = exec.LookPath("scontrol"); err != nil {
		t.Skip("scontrol not installed (Debian/Ubuntu: apt-get install slurm-client)")
	}
	// The test runs slurmctld with auth/none, so that no munged is needed;
	// some builds leave that plugin out.
	plugins, _ := filepath.Glob("/usr/lib*/*/slurm*/auth_none.so")
	more, _ := filepath.Glob("/usr/lib*/slurm*/auth_none.so")
	local, _ := filepath.Glob("/usr/local/lib*/slurm*/auth_none.so")
	if len(plugins)+len(more)+len(local) == 0 {
		t.Skip("this Slurm build has no auth/none plugin (auth_none.so), which the test uses instead of munged")
	}
	if os.Geteuid() != 0 {
		t.Skip("slurmctld must run as root here (it checks SlurmUser against its user and writes its state as that user): run the test as root")
	}
	return slurmctld, scontrol
}

// slurmSwitch is one line of 'scontrol show topology'.
type slurmSwitch struct {
	level, linkSpeed string
	nodes, switches  []string
}

// showTopology starts slurmctld on conf (a topology.conf) with a minimal
// slurm.conf whose nodes are hosts, waits until it answers, and returns
// what 'scontrol show topology' says, by switch name, and the log lines in
// which slurmctld complains about the topology. slurmctld is always
// stopped before the test ends. When slurmctld does not come up, it is
// started once more without a topology: if that fails too, this machine
// cannot run it and the test skips; otherwise the file is to blame.
func showTopology(t *testing.T, slurmctld, scontrol string, conf []byte, hosts []string) (got map[string]slurmSwitch, complaints []string) {
	t.Helper()
	scontrolRun, dir, err := startSlurmctld(t, slurmctld, scontrol, conf, hosts)
	if err != nil {
		if _, _, bare := startSlurmctld(t, slurmctld, scontrol, nil, hosts); bare != nil {
			t.Skipf("slurmctld cannot start here, with or without a topology: %v", bare)
		}
		t.Fatalf("slurmctld starts without netaware's topology.conf but not with it: %v", err)
	}
	out, err := scontrolRun("show", "topology")
	if err != nil {
		t.Fatalf("scontrol show topology: %v\n%s\n%s", err, out, readLog(dir))
	}
	// The tree plugin logs what it dislikes (unknown nodes, nodes under no
	// switch, no switch reaching all nodes) and carries on: those count as
	// rejection.
	for _, l := range strings.Split(readLog(dir), "\n") {
		low := strings.ToLower(strings.ReplaceAll(l, dir, "")) // the test's name is in dir
		if (strings.Contains(low, "error") || strings.Contains(low, "fatal") || strings.Contains(low, "warning")) &&
			(strings.Contains(low, "switch") || strings.Contains(low, "topolog")) {
			complaints = append(complaints, l)
		}
	}
	got = map[string]slurmSwitch{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var name string
		var s slurmSwitch
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			var err error
			switch k {
			case "SwitchName":
				name = v
			case "Level":
				s.level = v
			case "LinkSpeed":
				s.linkSpeed = v
			case "Nodes":
				s.nodes, err = topo.ExpandHostlist(v)
			case "Switches":
				s.switches, err = topo.ExpandHostlist(v)
			}
			if err != nil {
				t.Fatalf("scontrol show topology: %q: %v", line, err)
			}
		}
		if name == "" {
			t.Fatalf("scontrol show topology: line without SwitchName: %q\n%s", line, out)
		}
		got[name] = s
	}
	return got, complaints
}

// startSlurmctld runs slurmctld -D with a minimal slurm.conf in a fresh
// directory: conf as its topology.conf with the topology/tree plugin, or
// topology/none when conf is nil. It returns a function running scontrol
// against it once 'scontrol ping' answers, and the directory; the error
// holds slurmctld's output and log. slurmctld is stopped when the test ends.
func startSlurmctld(t *testing.T, slurmctld, scontrol string, conf []byte, hosts []string) (run func(args ...string) (string, error), dir string, err error) {
	t.Helper()
	dir = t.TempDir()
	port := freePort(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	plugin := "topology/tree"
	if conf == nil {
		plugin = "topology/none"
	}
	// auth/none (a plugin Debian's 22.05 still ships) avoids running munged;
	// nothing here talks to a slurmd. NodeAddr points at loopback, where no
	// slurmd listens: the nodes stay DOWN, which the topology does not mind.
	slurmConf := fmt.Sprintf(`ClusterName=netaware
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=%s
AuthType=auth/none
CredType=cred/none
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
SlurmctldPidFile=%s/slurmctld.pid
SlurmctldLogFile=%s/slurmctld.log
MailProg=/bin/true
TopologyPlugin=%s
SelectType=select/cons_tres
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES State=UP
`, port, port+1, me.Username, dir, dir, dir, dir, plugin, topo.CompressHostlist(hosts))
	files := map[string][]byte{"slurm.conf": []byte(slurmConf)}
	if conf != nil {
		files["topology.conf"] = conf
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	var logs bytes.Buffer
	ctl := exec.CommandContext(ctx, slurmctld, "-D", "-f", filepath.Join(dir, "slurm.conf"))
	ctl.Stdout, ctl.Stderr = &logs, &logs
	if err := ctl.Start(); err != nil {
		cancel()
		return nil, dir, fmt.Errorf("start slurmctld: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ctl.Wait() }()
	t.Cleanup(func() {
		_ = ctl.Process.Kill()
		<-exited
		cancel()
	})
	env := append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	run = func(args ...string) (string, error) {
		c, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		cmd := exec.CommandContext(c, scontrol, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := run("ping")
		if err == nil && strings.Contains(out, "is UP") {
			return run, dir, nil
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			return nil, dir, fmt.Errorf("slurmctld exited (%v) before answering:\n%s\n%s", err, logs.String(), readLog(dir))
		default:
		}
		if time.Now().After(deadline) {
			return nil, dir, fmt.Errorf("slurmctld did not answer 'scontrol ping' within 30 s: %s\n%s\n%s", out, logs.String(), readLog(dir))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readLog(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
	return string(b)
}

// freePort asks the kernel for a TCP port nobody uses right now, and one
// above it for the slurmd port slurm.conf must name.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p < 65535 {
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

// checkSlurmTopology compares what slurmctld made of topology.conf with
// the file: every switch with its nodes (all nodes below it, as Slurm
// lists them), child switches, height and link speed (Slurm's default is 1).
func checkSlurmTopology(t *testing.T, want []topo.SlurmSwitch, got map[string]slurmSwitch) {
	t.Helper()
	byName := map[string]topo.SlurmSwitch{}
	for _, s := range want {
		byName[s.Name] = s
	}
	var below func(name string) ([]string, int)
	below = func(name string) ([]string, int) {
		s := byName[name]
		nodes := slices.Clone(s.Nodes)
		level := 0
		for _, c := range s.Switches {
			n, l := below(c)
			nodes = append(nodes, n...)
			level = max(level, l+1)
		}
		return nodes, level
	}
	if len(got) != len(want) {
		t.Errorf("slurmctld knows %d switches, topology.conf has %d", len(got), len(want))
	}
	for _, w := range want {
		g, ok := got[w.Name]
		if !ok {
			t.Errorf("switch %s (topology.conf line %d) missing from scontrol show topology", w.Name, w.Line)
			continue
		}
		nodes, level := below(w.Name)
		slices.Sort(nodes)
		gn := slices.Sorted(slices.Values(g.nodes))
		if !slices.Equal(gn, nodes) {
			t.Errorf("switch %s: slurmctld lists nodes %v, want %v", w.Name, gn, nodes)
		}
		ws := slices.Sorted(slices.Values(w.Switches))
		gs := slices.Sorted(slices.Values(g.switches))
		if !slices.Equal(gs, ws) {
			t.Errorf("switch %s: slurmctld lists switches %v, want %v", w.Name, gs, ws)
		}
		if g.level != strconv.Itoa(level) {
			t.Errorf("switch %s: Level=%s, want %d", w.Name, g.level, level)
		}
		speed := w.LinkSpeed
		if speed == "" {
			speed = "1"
		}
		if g.linkSpeed != speed {
			t.Errorf("switch %s: LinkSpeed=%s, want %s", w.Name, g.linkSpeed, speed)
		}
	}
}
