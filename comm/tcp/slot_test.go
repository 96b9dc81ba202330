package tcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"netaware/comm"
)

// The receive slot (see Endpoint.post) keeps one posted receive outside
// the matching engine. These tests check that MPI's order rules survive:
// a message matches the earliest posted receive that accepts it, whether
// that one sits in the slot or in the engine.

const slotCid = 7

type slotCase struct {
	first, second [2]int // (src, tag) of the receive posted first and second
	sends         []int  // tags rank 0 sends, in order
	want          [2]int // tag received by the first and the second receive
}

func TestReceiveSlotKeepsPostOrder(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 20*time.Second)
	any := [2]int{comm.AnySource, comm.AnyTag}
	cases := []slotCase{
		{first: [2]int{0, 5}, second: any, sends: []int{5, 5}, want: [2]int{5, 5}},
		{first: any, second: [2]int{0, 5}, sends: []int{5, 5}, want: [2]int{5, 5}},
		{first: [2]int{0, 5}, second: any, sends: []int{6, 5}, want: [2]int{5, 6}},
		{first: [2]int{0, 5}, second: [2]int{0, 6}, sends: []int{6, 5}, want: [2]int{5, 6}},
		{first: [2]int{0, comm.AnyTag}, second: [2]int{0, 3}, sends: []int{3, 3}, want: [2]int{3, 3}},
	}
	for i, c := range cases {
		b1, b2 := make([]byte, 8), make([]byte, 8)
		r1 := eps[1].Irecv(slotCid, c.first[0], c.first[1], b1)
		eps[1].mu.Lock()
		inSlot := eps[1].slot == r1
		eps[1].mu.Unlock()
		if !inSlot {
			t.Fatalf("case %d: the first receive did not take the slot", i)
		}
		r2 := eps[1].Irecv(slotCid, c.second[0], c.second[1], b2)
		for k, tag := range c.sends {
			if _, err := eps[0].Isend(slotCid, 1, tag, []byte{byte(i), byte(k)}, false).Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		st1, err := r1.Wait(ctx)
		if err != nil {
			t.Fatalf("case %d: first receive: %v", i, err)
		}
		st2, err := r2.Wait(ctx)
		if err != nil {
			t.Fatalf("case %d: second receive: %v", i, err)
		}
		if st1.Tag != c.want[0] || st2.Tag != c.want[1] {
			t.Errorf("case %d: receives got tags %d, %d; want %d, %d", i, st1.Tag, st2.Tag, c.want[0], c.want[1])
		}
		// Same tag twice: the earlier receive gets the earlier message.
		if c.sends[0] == c.sends[1] && (b1[1] != 0 || b2[1] != 1) {
			t.Errorf("case %d: messages overtook each other: first receive got #%d, second #%d", i, b1[1], b2[1])
		}
	}
}

// AnyTag in the slot must not take a message with a negative (system) tag,
// as in the engine.
func TestReceiveSlotAnyTagSkipsSystemTags(t *testing.T) {
	ctx, eps := twoRanks(t, 20*time.Second)
	b := make([]byte, 4)
	r := eps[1].Irecv(slotCid, 0, comm.AnyTag, b)
	eps[0].Isend(slotCid, 1, -9, []byte{9}, false)
	eps[0].Isend(slotCid, 1, 2, []byte{2}, false)
	st, err := r.Wait(ctx)
	if err != nil || st.Tag != 2 || b[0] != 2 {
		t.Fatalf("AnyTag receive: tag %d payload %d err %v; want tag 2 payload 2", st.Tag, b[0], err)
	}
	st, err = eps[1].Irecv(slotCid, 0, -9, b).Wait(ctx)
	if err != nil || st.Tag != -9 || b[0] != 9 {
		t.Fatalf("system-tag receive: tag %d payload %d err %v", st.Tag, b[0], err)
	}
}

// A receive cancelled (its context ended) while in the slot leaves it: the
// next message goes to the next receive.
func TestReceiveSlotCancel(t *testing.T) {
	checkNoLeak(t)
	ctx, eps := twoRanks(t, 20*time.Second)
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if _, err := eps[1].Irecv(slotCid, 0, 1, make([]byte, 1)).Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled receive: err %v, want deadline exceeded", err)
	}
	eps[1].mu.Lock()
	left := eps[1].slot
	eps[1].mu.Unlock()
	if left != nil {
		t.Fatal("a cancelled receive stayed in the slot")
	}
	if _, err := eps[0].Isend(slotCid, 1, 1, []byte{42}, false).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := eps[1].Irecv(slotCid, 0, 1, b).Wait(ctx); err != nil || b[0] != 42 {
		t.Fatalf("receive after cancel: payload %d err %v", b[0], err)
	}
}
