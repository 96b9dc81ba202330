package pingpong

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/tcp"
)

func small() Options {
	return Options{Sizes: []int{0, 1, 3000}, Iters: 20, Rounds: 3, StreamSize: 5000, StreamCount: 4, Raw: true, RawHost: "127.0.0.1"}
}

// run returns the reports of every rank.
func run(t *testing.T, n int, o Options, world func(ctx context.Context, n int, body func(context.Context, comm.Comm) error) error) []*Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reps := make([]*Report, n)
	var mu sync.Mutex
	err := world(ctx, n, func(ctx context.Context, c comm.Comm) error {
		r, err := Run(ctx, c, o)
		mu.Lock()
		reps[c.Rank()] = r
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return reps
}

func checkReport(t *testing.T, reps []*Report, o Options, withRaw bool) {
	t.Helper()
	for r := 1; r < len(reps); r++ {
		if reps[r] != nil {
			t.Errorf("rank %d returned a report; only rank 0 should", r)
		}
	}
	rep := reps[0]
	if rep == nil {
		t.Fatal("rank 0 returned no report")
	}
	if rep.Ranks != len(reps) || rep.Rounds != o.Rounds || len(rep.Latency) != len(o.Sizes) || len(rep.Streaming) != 1 {
		t.Fatalf("report shape: %+v", rep)
	}
	for i, l := range rep.Latency {
		// Iterations: o.Iters per KiB or less, scaled down above, at least 10.
		want := max(10, o.Iters*1024/max(o.Sizes[i], 1024))
		if l.SizeBytes != o.Sizes[i] || l.Iterations != want {
			t.Errorf("size %d: got size %d, %d iterations; want %d", o.Sizes[i], l.SizeBytes, l.Iterations, want)
		}
		if l.NetawareS <= 0 || (l.RawS > 0) != withRaw || (l.LatencyRatio > 0) != withRaw {
			t.Errorf("size %d: times %+v (raw baseline expected: %v)", o.Sizes[i], l, withRaw)
		}
	}
	s := rep.Streaming[0]
	if s.SizeBytes != o.StreamSize || s.Messages != o.StreamCount || s.Netaware <= 0 || (s.Raw > 0) != withRaw {
		t.Errorf("stream: %+v", s)
	}
}

func TestRunTCPWithRawBaseline(t *testing.T) {
	o := small()
	reps := run(t, 3, o, func(ctx context.Context, n int, body func(context.Context, comm.Comm) error) error {
		return tcp.RunLoopback(ctx, n, tcp.Config{}, body)
	})
	checkReport(t, reps, o, true)
}

func TestRunLocalWithoutRaw(t *testing.T) {
	o := small()
	o.Raw = false
	checkReport(t, run(t, 2, o, local.Run), o, false)
}

func TestRunNeedsTwoRanks(t *testing.T) {
	err := local.Run(context.Background(), 1, func(ctx context.Context, c comm.Comm) error {
		_, err := Run(ctx, c, small())
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "at least 2 ranks") {
		t.Fatalf("got %v, want an error about 2 ranks", err)
	}
}

func TestValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, mod := range map[string]func(*Options){
		"no sizes":      func(o *Options) { o.Sizes = nil },
		"negative size": func(o *Options) { o.Sizes = []int{-1} },
		"huge size":     func(o *Options) { o.Sizes = []int{1<<30 + 1} },
		"zero stream":   func(o *Options) { o.StreamSize = 0 },
		"zero rounds":   func(o *Options) { o.Rounds = 0 },
		"zero iters":    func(o *Options) { o.Iters = 0 },
		"zero count":    func(o *Options) { o.StreamCount = 0 },
		"raw, no host":  func(o *Options) { o.RawHost = "" },
	} {
		o := Defaults()
		mod(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// rounds alternates the order (netaware first in even rounds), warms each
// up once, and reports medians of times and of per-round ratios.
func TestRoundsOrderAndMedians(t *testing.T) {
	var order []string
	naTimes := []time.Duration{100, 10, 30, 20} // warm-up, then rounds 0..2
	rawTimes := []time.Duration{100, 5, 60, 10} // warm-up, then rounds 0..2
	i, j := 0, 0
	na := func() (time.Duration, error) { order = append(order, "n"); i++; return naTimes[i-1], nil }
	raw := func() (time.Duration, error) { order = append(order, "r"); j++; return rawTimes[j-1], nil }
	naMed, rawMed, ratio, err := rounds(3, true, na, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ""); got != "nrnrrnnr" {
		t.Errorf("order %q, want nrnrrnnr", got)
	}
	// na 10,30,20 -> 20; raw 5,60,10 -> 10; ratios 2, 0.5, 2 -> 2.
	if naMed != 20 || rawMed != 10 || ratio != 2 {
		t.Errorf("medians %v %v ratio %v, want 20 10 2", naMed, rawMed, ratio)
	}
	boom := errors.New("boom")
	one := func() (time.Duration, error) { return 1, nil }
	if _, _, _, err := rounds(2, false, one, func() (time.Duration, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("error not passed on: %v", err)
	}
}
