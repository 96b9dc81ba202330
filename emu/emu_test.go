package emu_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netaware/emu"
	"netaware/emu/emutest"
	"netaware/launch"
	"netaware/platform"
)

// These tests build clusters under the prefixes ne1-ne3 (this package's).

// helperEnv selects what the test binary does when started inside a
// cluster as a rank or a host's command.
const helperEnv = "NE_EMU_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "world":
		os.Exit(helperWorld())
	case "sink":
		os.Exit(helperSink())
	case "send":
		os.Exit(helperSend())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(3)
	}
}

// helperWorld prints its rank, world size and host name, then checks that
// every address in NE_ADDRS accepts a TCP connection on NE_PORT (each rank
// listens there first).
func helperWorld() int {
	host, _ := os.Hostname()
	fmt.Printf("rank=%s size=%s host=%s\n", os.Getenv("NETAWARE_RANK"), os.Getenv("NETAWARE_SIZE"), host)
	ln, err := net.Listen("tcp", ":"+os.Getenv("NE_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, a := range strings.Split(os.Getenv("NE_ADDRS"), ",") {
		addr := net.JoinHostPort(a, os.Getenv("NE_PORT"))
		var c net.Conn
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "unreachable:", err)
			return 1
		}
		c.Close()
	}
	// Stay until the others had time to reach this rank's listener.
	time.Sleep(500 * time.Millisecond)
	return 0
}

// helperSink accepts one connection on NE_PORT and prints the rate at which
// it received: bytes over the time from the first byte to the end.
func helperSink() int {
	ln, err := net.Listen("tcp", ":"+os.Getenv("NE_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	c, err := ln.Accept()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	buf := make([]byte, 1<<16)
	var n int64
	var first time.Time
	for {
		k, err := c.Read(buf)
		if k > 0 && n == 0 {
			first = time.Now()
		}
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("%d %.6f\n", n, time.Since(first).Seconds())
	return 0
}

// helperSend sends to NE_ADDR for NE_SECONDS.
func helperSend() int {
	c, err := net.Dial("tcp", os.Getenv("NE_ADDR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	secs, _ := strconv.ParseFloat(os.Getenv("NE_SECONDS"), 64)
	buf := make([]byte, 1<<16)
	for end := time.Now().Add(time.Duration(secs * float64(time.Second))); time.Now().Before(end); {
		if _, err := c.Write(buf); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// twoByTwo is the cluster the tests build (testdata/test-2x2.yaml).
const twoByTwo = "testdata/test-2x2.yaml"

func load(t *testing.T, file string) *platform.Platform {
	t.Helper()
	p, err := platform.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// measureRate sends from host src to host dst for secs seconds and returns
// the receiver's rate in bytes per second.
func measureRate(t *testing.T, c *emu.Cluster, src, dst int, secs float64) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sink := c.Command(ctx, dst, os.Args[0])
	sink.Env = append(os.Environ(), helperEnv+"=sink", "NE_PORT=5201")
	out, err := sink.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sink.Stderr = os.Stderr
	if err := sink.Start(); err != nil {
		t.Fatal(err)
	}
	defer sink.Wait()
	buf := make([]byte, 10)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "listening\n" {
		t.Fatalf("sink on %s: %q %v", c.Hosts[dst].Name, buf, err)
	}
	send := c.Command(ctx, src, os.Args[0])
	send.Env = append(os.Environ(), helperEnv+"=send", "NE_ADDR="+net.JoinHostPort(c.Hosts[dst].Address, "5201"),
		"NE_SECONDS="+strconv.FormatFloat(secs, 'f', -1, 64))
	if b, err := send.CombinedOutput(); err != nil {
		t.Fatalf("send %s -> %s: %v: %s", c.Hosts[src].Name, c.Hosts[dst].Name, err, b)
	}
	res, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	var s float64
	if _, err := fmt.Sscan(string(res), &n, &s); err != nil || s <= 0 {
		t.Fatalf("sink on %s said %q", c.Hosts[dst].Name, res)
	}
	return float64(n) / s
}

func TestClusterHasHostNamesAddressesAndRates(t *testing.T) {
	c := emutest.Cluster(t, load(t, twoByTwo), "ne1")
	myHost, _ := os.Hostname()

	var addrs []string
	for _, h := range c.Hosts {
		addrs = append(addrs, h.Address)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.Run(ctx, []string{os.Args[0]}, emu.RunOptions{
		OutDir:  dir,
		Env:     []string{helperEnv + "=world", "NE_PORT=7001", "NE_ADDRS=" + strings.Join(addrs, ",")},
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range c.Ranks {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(r)+".out"))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("rank=%d size=4 host=%s\n", r, c.Hosts[c.Ranks[r]].Name)
		if string(b) != want {
			t.Errorf("rank %d printed %q, want %q", r, b, want)
		}
	}
	if h, _ := os.Hostname(); h != myHost {
		t.Errorf("this machine's host name changed from %s to %s", myHost, h)
	}

	// 100 Mbit host links, 20 Mbit trunk: TCP goodput is about 95 % of the
	// shaped rate; the band is wide for a shared 2-core machine.
	same := measureRate(t, c, 0, 1, 1)
	across := measureRate(t, c, 2, 0, 1)
	t.Logf("a0->a1 %.1f Mbit/s, b0->a0 %.1f Mbit/s", same*8/1e6, across*8/1e6)
	if same < 0.6*12.5e6 || same > 1.1*12.5e6 {
		t.Errorf("same switch: %.1f Mbit/s, want about 100", same*8/1e6)
	}
	if across < 0.6*2.5e6 || across > 1.1*2.5e6 {
		t.Errorf("across the trunk: %.1f Mbit/s, want about 20", across*8/1e6)
	}

	got, err := emu.Load("", "ne1")
	if err != nil || got.State != "up" || len(got.Hosts) != 4 || len(got.Missing()) != 0 {
		t.Fatalf("recorded state: %+v, %v", got, err)
	}
	if err := emu.Down(context.Background(), "", "ne1"); err != nil {
		t.Fatal(err)
	}
	assertGone(t, "ne1")
}

// assertGone checks that nothing of cluster prefix is left.
func assertGone(t *testing.T, prefix string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, prefix+"-") {
			t.Errorf("namespace left: %s", l)
		}
	}
	out, err = exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], prefix) {
			t.Errorf("interface left: %s", l)
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mi), filepath.Join(emu.DefaultStateDir, prefix)+"/") {
		t.Errorf("UTS namespace mounts of %s left", prefix)
	}
	for _, p := range []string{filepath.Join(emu.DefaultStateDir, prefix+".json"), filepath.Join(emu.DefaultStateDir, prefix)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left", p)
		}
	}
}

func TestRunNamesTheFailingRankAndStopsOnTimeout(t *testing.T) {
	c := emutest.Cluster(t, load(t, twoByTwo), "ne2")
	ctx := context.Background()
	err := c.Run(ctx, []string{"sh", "-c", `[ "$NETAWARE_RANK" != 2 ]`}, emu.RunOptions{Timeout: 20 * time.Second})
	var re *launch.RankError
	if !errors.As(err, &re) || re.Rank != 2 {
		t.Errorf("rank 2 exits 1: error %v, want one naming rank 2", err)
	}
	var out, errw strings.Builder
	dir := t.TempDir()
	err = c.Run(ctx, []string{"sh", "-c", `echo out $NETAWARE_RANK; echo err $NETAWARE_RANK >&2`},
		emu.RunOptions{Live: true, Stdout: &out, Stderr: &errw, OutDir: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		if !strings.Contains(out.String(), fmt.Sprintf("[%d] out %d\n", r, r)) || !strings.Contains(errw.String(), fmt.Sprintf("[%d] err %d\n", r, r)) {
			t.Errorf("live output of rank %d missing: stdout %q stderr %q", r, out.String(), errw.String())
		}
		if b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(r)+".out")); err != nil || string(b) != fmt.Sprintf("out %d\n", r) {
			t.Errorf("rank %d's output file: %q %v", r, b, err)
		}
	}
	if strings.Count(out.String(), "\n") != 4 {
		t.Errorf("live stdout printed %q: want 4 lines, printed once", out.String())
	}
	start := time.Now()
	err = c.Run(ctx, []string{"sleep", "30"}, emu.RunOptions{Timeout: 300 * time.Millisecond})
	if !errors.Is(err, emu.ErrTimeout) {
		t.Errorf("sleep 30 with a 300 ms timeout: error %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("stopping the ranks took %v, want under 2.3 s", d)
	}
	for _, h := range c.Hosts {
		out, err := exec.Command("ip", "netns", "pids", h.Namespace).Output()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("host %s still runs %q (%v)", h.Name, out, err)
		}
	}
}

func TestDownRemovesAHalfBuiltCluster(t *testing.T) {
	if err := emu.Check(); err != nil {
		t.Skipf("emulated cluster unavailable: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Cleanup(func() { emu.Down(context.Background(), "", "ne3") })
	emu.Down(ctx, "", "ne3")
	pl, err := emu.NewPlan(load(t, twoByTwo), emu.Options{Prefix: "ne3"})
	if err != nil {
		t.Fatal(err)
	}
	c := &emu.Cluster{Plan: pl, State: "building"}
	if err := os.MkdirAll(filepath.Dir(pl.Hosts[0].UTS), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range pl.Hosts {
		if err := os.WriteFile(h.UTS, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	// As if Up died in the middle of host 2, with a veth pair created in
	// this namespace and not moved yet, and a process running in host 0.
	stop := 0
	for i, s := range pl.Steps {
		if strings.Join(s, " ") == "ip netns add ne3-h2" {
			stop = i + 3
		}
	}
	for _, s := range pl.Steps[:stop] {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", s, err, out)
		}
	}
	if out, err := exec.Command("ip", "link", "add", "ne3p3", "type", "veth", "peer", "name", "ne3t0b").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	sleeper := exec.Command("nsenter", "--net=/run/netns/ne3-h0", "sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	// nsenter enters the namespace after it started: wait until it has.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, _ := exec.Command("ip", "netns", "pids", "ne3-h0").Output()
		if strings.Contains(" "+strings.Join(strings.Fields(string(out)), " ")+" ", " "+strconv.Itoa(sleeper.Process.Pid)+" ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the process never entered host 0's namespace")
		}
	}
	if err := emu.Down(ctx, "", "ne3"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		sleeper.Process.Kill()
		t.Error("the process in host 0 survived down")
	}
	assertGone(t, "ne3")
	if err := emu.Down(ctx, "", "ne3"); err != nil {
		t.Errorf("down of a removed cluster: %v", err)
	}
}

func TestUpRemovesWhatItBuiltWhenInterrupted(t *testing.T) {
	if err := emu.Check(); err != nil {
		t.Skipf("emulated cluster unavailable: %v", err)
	}
	t.Cleanup(func() { emu.Down(context.Background(), "", "ne3") })
	emu.Down(context.Background(), "", "ne3")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stepCtx, interrupt := context.WithCancel(ctx)
	_, err := emu.Up(stepCtx, load(t, twoByTwo), emu.Options{Prefix: "ne3"}, func(done, total int) {
		if done == 15 {
			interrupt()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Up interrupted at step 15: error %v, want context.Canceled", err)
	}
	assertGone(t, "ne3")
}
