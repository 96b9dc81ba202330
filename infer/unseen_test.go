package infer

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// recorder keeps every measurement its prober makes, as the live
// inference's rank 0 does.
type recorder struct {
	p  Prober
	ms []Measurement
}

func (r *recorder) RTT(a, b int) (RTT, error) {
	v, err := r.p.RTT(a, b)
	if err == nil {
		r.ms = append(r.ms, Measurement{A: a, B: b, RTT: v})
	}
	return v, err
}

// twoSockets is one host of two sockets: socket X (hosts 0-2) and socket
// Y (hosts 3-6) 0.3 us beyond X's switch, every leaf 0.15 us.
func twoSockets() *trueTree {
	tt := &trueTree{parent: []int{-1, 0}, up: []float64{0, 0.3e-6}}
	for _, sw := range []int{0, 0, 0, 1, 1, 1, 1} {
		tt.parent = append(tt.parent, sw)
		tt.up = append(tt.up, 0.15e-6)
		tt.host = append(tt.host, len(tt.parent)-1)
	}
	return tt
}

// strandedMeasurements are twoSockets' exact pairs without host 3's
// pairs with the hosts from on: what host 3 measured before add left it
// stranded (on 4: it never saw socket Y; on 5: it saw 4 only).
func strandedMeasurements(tt *trueTree, from int) []Measurement {
	var ms []Measurement
	for _, m := range exactPairs(tt, 7) {
		if m.A != 3 || m.B < from {
			ms = append(ms, m)
		}
	}
	return ms
}

// strandedSocket is twoSockets as add left it under noise: host 3, the
// first of socket Y, hangs from X's switch by 0.45 us (where add put it
// when Y's switch did not exist).
func strandedSocket() *Tree {
	return handTree(
		node{0, -1, 0},
		node{-1, 0, 0.15e-6}, // X
		node{1, 1, 0.15e-6},
		node{2, 1, 0.15e-6},
		node{3, 1, 0.45e-6},
		node{-1, 1, 0.3e-6}, // Y
		node{4, 5, 0.15e-6},
		node{5, 5, 0.15e-6},
		node{6, 5, 0.15e-6},
	)
}

// The racks-16x2x8-1gbe failure, by hand (strandedSocket): host 3's
// socket-mates 4-6 formed Y without measuring it.
// Every distance host 3 was measured at fits both places, so Refine
// keeps it; Unseen names the one pair that tells, and with it Refine
// restores the truth.
func TestUnseenNamesTheStrandedSocketsPair(t *testing.T) {
	tt := twoSockets()
	stranded := strandedSocket()
	ms := strandedMeasurements(tt, 4)
	kept, _ := Refine(stranded, ms)
	if d := kept.Distance(3, 4); near(d, tt.dist(3, 4)) {
		t.Fatalf("Refine placed host 3 without a measurement of socket Y (3-4 at %.3g us)", d*1e6)
	}
	pairs := Unseen(kept, ms)
	if got, want := fmt.Sprint(pairs), "[[3 4]]"; got != want {
		t.Fatalf("unseen pairs %s, want %s", got, want)
	}
	ms = append(ms, exactPair(tt, 3, 4))
	got, _ := Refine(kept, ms)
	checkTruthDistances(t, "refined", got, tt, 7)
	// At Y, host 3 has still measured neither 5 nor 6: each could share
	// a switch with it below Y, as far as the measurements go.
	if got, want := fmt.Sprint(Unseen(got, ms)), "[[3 5] [3 6]]"; got != want {
		t.Errorf("after the move, unseen pairs %s, want %s", got, want)
	}
	if again := Unseen(got, append(ms, exactPair(tt, 3, 5), exactPair(tt, 3, 6))); len(again) != 0 {
		t.Errorf("with every pair of Y measured, unseen pairs %v, want none", again)
	}
}

// Without noise procedure add leaves no branch unseen: every branch at
// the switch a host hangs from was pruned by a step through that switch.
// Random trees, random orders, exact probes: Unseen finds nothing.
func TestUnseenFindsNothingInExactInferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for trial := 0; trial < 40; trial++ {
		tt := randomTrueTreeQ(rng, 2+rng.IntN(8), 3+rng.IntN(40), 3+rng.IntN(10), trial%2 == 1)
		rec := &recorder{p: &exactProber{tt: tt}}
		res, err := Infer(rng.Perm(len(tt.host)), rec, 3)
		if err != nil {
			t.Fatal(err)
		}
		if pairs := Unseen(res.Tree, rec.ms); len(pairs) != 0 {
			t.Errorf("trial %d: unseen pairs %v in an exact inference", trial, pairs)
		}
	}
}

// RefineLeaves re-places the given leaves and those measured with them,
// no others: with the pair 3-4 measured, naming 4 moves the stranded host
// 3 (measured with 4), naming 5 (never measured with 3) leaves it where
// it is.
func TestRefineLeavesReplacesTheGivenAndTheirPartners(t *testing.T) {
	tt := twoSockets()
	stranded := strandedSocket()
	ms := strandedMeasurements(tt, 5)
	if got, _ := RefineLeaves(stranded, ms, []int{5}); !near(got.Distance(3, 4), stranded.Distance(3, 4)) {
		t.Errorf("naming 5 moved host 3: 3-4 at %.3g us, was %.3g us", got.Distance(3, 4)*1e6, stranded.Distance(3, 4)*1e6)
	}
	got, _ := RefineLeaves(stranded, ms, []int{4})
	checkTruthDistances(t, "naming 4:", got, tt, 7)
}
