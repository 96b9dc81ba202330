package comm

import "testing"

// TestDup: a duplicate keeps the size and rank and gets a new context per
// call, and a world larger than the ones before sees its whole rank list.
func TestDup(t *testing.T) {
	for _, n := range []int{3, 5, 2, 7} {
		c := &communicator{cid: WorldContext, size: n, rank: n - 1, subs: map[uint64]int{}}
		seen := map[uint64]bool{WorldContext: true}
		for k := 0; k < 2; k++ {
			d, err := Dup(c)
			if err != nil {
				t.Fatal(err)
			}
			dc := d.(*communicator)
			if d.Size() != n || d.Rank() != n-1 || dc.members != nil {
				t.Fatalf("Dup of %d ranks: size %d, rank %d, members %v", n, d.Size(), d.Rank(), dc.members)
			}
			if seen[dc.cid] {
				t.Fatalf("Dup of %d ranks: context %x reused", n, dc.cid)
			}
			seen[dc.cid] = true
		}
	}
}

// TestScratchOwnBuffers: a transport without serial memory gets a buffer
// of its own per call.
func TestScratchOwnBuffers(t *testing.T) {
	c := &communicator{cid: WorldContext, size: 2, subs: map[uint64]int{}}
	a, b := Scratch(c, 64), Scratch(c, 64)
	if len(a) != 64 || len(b) != 64 || &a[0] == &b[0] {
		t.Fatalf("buffers of %d and %d bytes, shared %v", len(a), len(b), &a[0] == &b[0])
	}
	if Scratch(c, 0) != nil {
		t.Fatal("0 bytes: a buffer")
	}
}
