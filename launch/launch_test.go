package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/tcp"
)

// The test binary doubles as the rank program: with LAUNCH_TEST_ROLE set it
// plays a rank instead of running tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("LAUNCH_TEST_ROLE"); role != "" {
		os.Exit(rankMain(role))
	}
	os.Exit(m.Run())
}

func rankMain(role string) int {
	rank, _ := strconv.Atoi(os.Getenv(tcp.EnvRank))
	switch role {
	case "echo":
		fmt.Printf("hello from rank %s of %s host=%s token=%s\n", os.Getenv(tcp.EnvRank), os.Getenv(tcp.EnvSize),
			os.Getenv("FAKE_HOST"), os.Getenv(tcp.EnvToken))
		fmt.Fprintf(os.Stderr, "partial line without newline from %d", rank)
		return 0
	case "rank0json":
		if rank == 0 {
			fmt.Printf("{\n  \"ranks\": %s\n}\n", os.Getenv(tcp.EnvSize))
		}
		return 0
	case "fail1":
		if rank == 1 {
			fmt.Println("rank 1 giving up")
			return 3
		}
		time.Sleep(time.Minute)
		return 0
	case "sigint":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		fmt.Println("waiting")
		select {
		case <-ch:
			fmt.Println("got SIGINT")
			return 0
		case <-time.After(time.Minute):
			return 1
		}
	case "wait":
		// Join, report readiness, then wait for a message that never comes:
		// only the death of a rank ends the wait. SIGTERM from the launcher
		// is ignored so that the error gets printed.
		signal.Ignore(syscall.SIGTERM)
		env, ok := tcp.Detect()
		if !ok {
			fmt.Println("no rank in the environment")
			return 2
		}
		ctx := context.Background()
		c, closer, err := tcp.Join(ctx, env)
		if err != nil {
			fmt.Println("join:", err)
			return 2
		}
		defer closer.Close()
		if err := comm.Barrier(ctx, c); err != nil {
			fmt.Println("barrier:", err)
			return 2
		}
		fmt.Printf("ready pid=%d\n", os.Getpid())
		start := time.Now()
		_, err = c.Recv(ctx, (c.Rank()+1)%c.Size(), 0, make([]byte, 1))
		var re *comm.RankError
		if errors.As(err, &re) {
			fmt.Printf("detected failure of rank %d after %v: %v\n", re.Rank, time.Since(start).Round(time.Millisecond), err)
		} else {
			fmt.Printf("receive ended with %v\n", err)
		}
		return 3
	}
	return 2
}

// syncBuffer collects output written by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestParseHostfile(t *testing.T) {
	in := `# cluster
node1 slots=4
node2            # one slot
node3 slots=2 max_slots=8
node1 slots=1
`
	hosts, err := ParseHostfile(strings.NewReader(in), "h.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []Host{{"node1", 5}, {"node2", 1}, {"node3", 2}}
	if fmt.Sprint(hosts) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", hosts, want)
	}
	for _, bad := range []string{"node1 slots=x\n", "node1 slots=0\n", "node1 colour=red\n", "node1 slots\n", "", "node1 slots=9 max_slots=2\n", "a;rm slots=1\n"} {
		if _, err := ParseHostfile(strings.NewReader(bad), "bad.txt"); err == nil || !strings.Contains(err.Error(), "bad.txt") {
			t.Errorf("%q: got %v, want an error naming the file", bad, err)
		}
	}
}

func TestPlaceBySlot(t *testing.T) {
	got, err := Place([]Host{{"a", 2}, {"b", 1}, {"c", 3}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a a b c c"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	if _, err := Place([]Host{{"a", 2}}, 3); err == nil {
		t.Fatal("oversubscription accepted")
	}
}

func TestPrefixWriterKeepsLinesWhole(t *testing.T) {
	var out bytes.Buffer
	w := &prefixWriter{s: &stream{w: &out, mode: PrefixAlways, first: -1}, rank: 7}
	w.Write([]byte("one\ntw"))
	w.Write([]byte("o\nthr"))
	w.Flush()
	if got, want := out.String(), "[7] one\n[7] two\n[7] thr\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestPrefixModes: auto forwards a lone rank's lines untouched and
// prefixes every line from a second rank's first one on; never and always
// do what they say.
func TestPrefixModes(t *testing.T) {
	type write struct {
		rank int
		text string
	}
	writes := []write{{0, "{\n"}, {0, " \"a\": 1\n"}, {2, "warn"}, {2, "ing\n"}, {0, "}\n"}}
	for _, tc := range []struct {
		mode PrefixMode
		want string
	}{
		{PrefixAuto, "{\n \"a\": 1\n[2] warning\n[0] }\n"},
		{PrefixAlways, "[0] {\n[0]  \"a\": 1\n[2] warning\n[0] }\n"},
		{PrefixNever, "{\n \"a\": 1\nwarning\n}\n"},
	} {
		var out bytes.Buffer
		s := &stream{w: &out, mode: tc.mode, first: -1}
		ws := map[int]*prefixWriter{0: {s: s, rank: 0}, 2: {s: s, rank: 2}}
		for _, w := range writes {
			ws[w.rank].Write([]byte(w.text))
		}
		if out.String() != tc.want {
			t.Errorf("mode %d: got %q, want %q", tc.mode, out.String(), tc.want)
		}
	}
	for in, want := range map[string]PrefixMode{"auto": PrefixAuto, "always": PrefixAlways, "never": PrefixNever} {
		if got, err := ParsePrefixMode(in); err != nil || got != want {
			t.Errorf("ParsePrefixMode(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParsePrefixMode("sometimes"); err == nil {
		t.Error("ParsePrefixMode accepted sometimes")
	}
}

// TestLaunchLoneRankOutputUntouched: when only rank 0 prints, its output
// arrives as the command wrote it, so that 'launch ... --json | jq' works.
func TestLaunchLoneRankOutputUntouched(t *testing.T) {
	var out, errOut syncBuffer
	err := Run(context.Background(), Spec{N: 3, Command: self(t), Env: []string{"LAUNCH_TEST_ROLE=rank0json"}, Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"ranks\": 3\n}\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if errOut.String() != "" {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "K=v:1": "K=v:1"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLaunchLocalForwardsOutputWithRankPrefix(t *testing.T) {
	var out, errOut syncBuffer
	err := Run(context.Background(), Spec{N: 3, Command: self(t), Env: []string{"LAUNCH_TEST_ROLE=echo"}, Token: "tok", Stdout: &out, Stderr: &errOut,
		StdoutPrefix: PrefixAlways, StderrPrefix: PrefixAlways})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(lines)
	want := []string{"[0] hello from rank 0 of 3 host= token=tok", "[1] hello from rank 1 of 3 host= token=tok", "[2] hello from rank 2 of 3 host= token=tok"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	for r := 0; r < 3; r++ {
		if !strings.Contains(errOut.String(), fmt.Sprintf("[%d] partial line without newline from %d\n", r, r)) {
			t.Errorf("stderr of rank %d missing:\n%s", r, errOut.String())
		}
	}
}

func TestLaunchHostfileThroughRsh(t *testing.T) {
	// A fake remote shell: runs the command line locally and tells the rank
	// which host it was meant for.
	dir := t.TempDir()
	rsh := filepath.Join(dir, "fakessh")
	script := "#!/bin/sh\nwhile [ \"$1\" = -o ]; do shift 2; done\nhost=\"$1\"; shift\nFAKE_HOST=\"$host\" exec sh -c \"$1\"\n"
	if err := os.WriteFile(rsh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	err := Run(context.Background(), Spec{
		N: 3, Command: self(t), Hosts: []Host{{"localhost", 2}, {"nodeB", 1}}, Rsh: rsh + " -o BatchMode=yes",
		Env: []string{"LAUNCH_TEST_ROLE=echo"}, Token: "s3cret tok'en", Stdout: &out, Stderr: &syncBuffer{}, StdoutPrefix: PrefixAlways,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[0] hello from rank 0 of 3 host=localhost token=s3cret tok'en",
		"[1] hello from rank 1 of 3 host=localhost token=s3cret tok'en",
		"[2] hello from rank 2 of 3 host=nodeB token=s3cret tok'en",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

func TestLaunchFailedRankStopsTheOthers(t *testing.T) {
	var out syncBuffer
	start := time.Now()
	err := Run(context.Background(), Spec{N: 4, Command: self(t), Env: []string{"LAUNCH_TEST_ROLE=fail1"}, Stdout: &out, Stderr: &out, Grace: 2 * time.Second,
		StdoutPrefix: PrefixAlways})
	var re *RankError
	if !errors.As(err, &re) || re.Rank != 1 || !strings.Contains(err.Error(), "rank 1 failed: exit status 3") {
		t.Fatalf("got %v, want rank 1's failure", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the other ranks were not stopped promptly: %v", d)
	}
	if !strings.Contains(out.String(), "[1] rank 1 giving up") {
		t.Errorf("output: %s", out.String())
	}
}

func TestLaunchForwardsInterrupt(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Spec{N: 2, Command: self(t), Env: []string{"LAUNCH_TEST_ROLE=sigint"}, Stdout: &out, Stderr: &out, Grace: 5 * time.Second,
			StdoutPrefix: PrefixAlways})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(out.String(), "waiting") < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want an interrupted launch", err)
	}
	for r := 0; r < 2; r++ {
		if !strings.Contains(out.String(), fmt.Sprintf("[%d] got SIGINT", r)) {
			t.Errorf("rank %d did not get the interrupt:\n%s", r, out.String())
		}
	}
}

// TestKilledRankDetectedByAll: real processes joined over TCP; one is
// killed with SIGKILL; every other rank's pending receive fails within
// 10 s with an error naming it, and the launch fails naming it.
func TestKilledRankDetectedByAll(t *testing.T) {
	const n, victim = 4, 2
	var out syncBuffer
	var mu sync.Mutex
	pids := map[int]int{}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Spec{
			N: n, Command: self(t), Env: []string{"LAUNCH_TEST_ROLE=wait"}, Stdout: &out, Stderr: &out, Grace: 15 * time.Second,
			Started: func(rank, pid int) { mu.Lock(); pids[rank] = pid; mu.Unlock() },
		})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(out.String(), "ready pid=") < n {
		if time.Now().After(deadline) {
			t.Fatalf("ranks never got ready:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	pid := pids[victim]
	mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for strings.Count(out.String(), "detected failure") < n-1 && time.Since(killed) < 10*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(killed); d >= 10*time.Second {
		t.Errorf("not every rank detected the failure within 10 s")
	} else {
		t.Logf("every rank detected the killed rank %v after the kill", d.Round(time.Millisecond))
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(40 * time.Second):
		t.Fatalf("launch did not end:\n%s", out.String())
	}
	var re *RankError
	if !errors.As(err, &re) || re.Rank != victim || !strings.Contains(err.Error(), "killed") {
		t.Errorf("launch returned %v, want rank %d killed\n%s", err, victim, out.String())
	}
	detect := regexp.MustCompile(`\[(\d)\] detected failure of rank (\d) after ([0-9.a-zµ]+)`)
	seen := map[string]bool{}
	for _, m := range detect.FindAllStringSubmatch(out.String(), -1) {
		if m[2] != strconv.Itoa(victim) {
			t.Errorf("rank %s blamed rank %s", m[1], m[2])
		}
		seen[m[1]] = true
	}
	if len(seen) != n-1 {
		t.Errorf("%d ranks reported the failure, want %d:\n%s", len(seen), n-1, out.String())
	}
}
