package comm

import "testing"

func TestParseStatCPU(t *testing.T) {
	// Field 39 of /proc/self/stat; the command name may contain spaces and ')'.
	fields := "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 7 37 38"
	cpu, ok := parseStatCPU("1234 (a b) c) " + fields)
	if !ok || cpu != 7 {
		t.Fatalf("got %d %v, want 7 true", cpu, ok)
	}
	if _, ok := parseStatCPU("1234 (x) S 1 2"); ok {
		t.Fatal("short stat line accepted")
	}
	if _, ok := parseStatCPU("garbage"); ok {
		t.Fatal("line without ')' accepted")
	}
}

func TestSubContextsDiffer(t *testing.T) {
	c := newCommunicator(nil, WorldContext, []int{0, 1, 2, 3}, 1)
	a, err := c.Sub([]int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Sub([]int{1, 2})
	d, _ := c.Sub([]int{2, 1})
	ca, cb, cd := a.(*communicator).cid, b.(*communicator).cid, d.(*communicator).cid
	if ca == cb || ca == cd || cb == cd || ca == WorldContext {
		t.Fatalf("contexts not distinct: %x %x %x", ca, cb, cd)
	}
	if d.Rank() != 1 || a.Rank() != 0 {
		t.Fatalf("ranks %d %d, want 0 and 1", a.Rank(), d.Rank())
	}
	if _, err := c.Sub([]int{0, 0, 1}); err == nil {
		t.Fatal("duplicate rank accepted")
	}
	if _, err := c.Sub([]int{0, 9}); err == nil {
		t.Fatal("out-of-range rank accepted")
	}
}

// TestSubPrefixContexts: the prefix lists of the world (hashed by length
// alone) still get a context per call and per length, and a rank past
// the prefix is not a member.
func TestSubPrefixContexts(t *testing.T) {
	c := &communicator{cid: WorldContext, size: 4, rank: 1, subs: map[uint64]int{}}
	a, err := c.Sub([]int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Sub([]int{0, 1, 2})
	d, _ := c.Sub([]int{0, 1, 2, 3})
	e, _ := c.Sub([]int{0, 2, 1})
	ca, cb, cd, ce := a.(*communicator).cid, b.(*communicator).cid, d.(*communicator).cid, e.(*communicator).cid
	if ca == cb || ca == cd || cb == cd || ca == ce || ca == WorldContext {
		t.Fatalf("contexts not distinct: %x %x %x %x", ca, cb, cd, ce)
	}
	if a.Size() != 3 || a.Rank() != 1 || e.Rank() != 2 {
		t.Fatalf("size %d rank %d, rank %d in the permuted list", a.Size(), a.Rank(), e.Rank())
	}
	if _, err := c.Sub([]int{0}); err != ErrNotMember {
		t.Fatalf("rank 1 in Sub([0]): %v", err)
	}
}
