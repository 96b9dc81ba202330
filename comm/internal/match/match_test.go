package match

import (
	"math/rand/v2"
	"testing"
)

func TestExactMatchInOrder(t *testing.T) {
	e := New[string, int]()
	e.Arrive(1, 0, 5, "a")
	e.Arrive(1, 0, 5, "b")
	e.Arrive(1, 0, 6, "c")
	if m, _, _, _, ok := e.Post(1, 0, 5, 0); !ok || m != "a" {
		t.Fatalf("first receive got %q, want a", m)
	}
	if m, _, tag, _, ok := e.Post(1, 0, AnyTag, 0); !ok || m != "b" || tag != 5 {
		t.Fatalf("wildcard tag got %q tag %d, want b/5", m, tag)
	}
	if m, _, _, _, ok := e.Post(1, AnySource, AnyTag, 0); !ok || m != "c" {
		t.Fatalf("full wildcard got %q, want c", m)
	}
	if u, p := e.Len(); u != 0 || p != 0 {
		t.Fatalf("queues not empty: %d %d", u, p)
	}
}

func TestContextIsolation(t *testing.T) {
	e := New[string, int]()
	e.Arrive(2, 0, 1, "other-context")
	if _, _, _, _, ok := e.Post(1, AnySource, AnyTag, 7); ok {
		t.Fatal("receive on context 1 matched a message of context 2")
	}
	if r, ok := e.Arrive(1, 3, 1, "mine"); !ok || r != 7 {
		t.Fatalf("posted receive not matched: %v %v", r, ok)
	}
}

func TestAnyTagSkipsSystemTags(t *testing.T) {
	e := New[string, int]()
	e.Arrive(1, 0, -5, "system")
	if _, _, _, _, ok := e.Post(1, 0, AnyTag, 1); ok {
		t.Fatal("AnyTag matched a negative system tag")
	}
	if _, ok := e.Arrive(1, 0, -5, "system2"); ok {
		t.Fatal("posted AnyTag receive accepted a system tag")
	}
	if m, _, _, _, ok := e.Post(1, 0, -5, 2); !ok || m != "system" {
		t.Fatalf("exact system-tag receive got %q", m)
	}
}

func TestPostedOrderBetweenExactAndWildcard(t *testing.T) {
	e := New[string, string]()
	e.Post(1, AnySource, 3, "wild-first")
	e.Post(1, 4, 3, "exact-second")
	if r, ok := e.Arrive(1, 4, 3, "m1"); !ok || r != "wild-first" {
		t.Fatalf("got %q, want the earlier wildcard receive", r)
	}
	if r, ok := e.Arrive(1, 4, 3, "m2"); !ok || r != "exact-second" {
		t.Fatalf("got %q, want exact-second", r)
	}
}

func TestCancel(t *testing.T) {
	e := New[string, int]()
	_, _, _, tk, _ := e.Post(1, 0, 0, 9)
	if !e.Cancel(tk) {
		t.Fatal("cancel of a posted receive failed")
	}
	if e.Cancel(tk) {
		t.Fatal("second cancel succeeded")
	}
	if _, ok := e.Arrive(1, 0, 0, "m"); ok {
		t.Fatal("cancelled receive matched")
	}
}

// TestRandomAgainstReference checks the engine against a naive model that
// keeps both queues as plain slices and scans them in order.
func TestRandomAgainstReference(t *testing.T) {
	type msg struct {
		cid      uint64
		src, tag int
		id       int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		e := New[int, int]()
		var refU, refP []msg
		for step := 0; step < 300; step++ {
			cid := uint64(rng.IntN(2))
			src, tag := rng.IntN(3), rng.IntN(3)-1 // tag -1 plays a system tag in arrivals
			if rng.IntN(2) == 0 {
				if tag == -1 {
					tag = -7
				}
				got, ok := e.Arrive(cid, src, tag, step)
				want := -1
				for i, p := range refP {
					if accepts(p.cid, p.src, p.tag, key{cid, src, tag}) {
						want = p.id
						refP = append(refP[:i], refP[i+1:]...)
						break
					}
				}
				if want < 0 {
					refU = append(refU, msg{cid, src, tag, step})
					if ok {
						t.Fatalf("trial %d step %d: arrival matched %d, reference none", trial, step, got)
					}
				} else if !ok || got != want {
					t.Fatalf("trial %d step %d: arrival matched %d/%v, want %d", trial, step, got, ok, want)
				}
			} else {
				if rng.IntN(3) == 0 {
					src = AnySource
				}
				got, _, _, _, ok := e.Post(cid, src, tag, step)
				want := -1
				for i, u := range refU {
					if accepts(cid, src, tag, key{u.cid, u.src, u.tag}) {
						want = u.id
						refU = append(refU[:i], refU[i+1:]...)
						break
					}
				}
				if want < 0 {
					refP = append(refP, msg{cid, src, tag, step})
					if ok {
						t.Fatalf("trial %d step %d: post matched %d, reference none", trial, step, got)
					}
				} else if !ok || got != want {
					t.Fatalf("trial %d step %d: post matched %d/%v, want %d", trial, step, got, ok, want)
				}
			}
		}
		if u, p := e.Len(); u != len(refU) || p != len(refP) {
			t.Fatalf("trial %d: queue lengths %d/%d, reference %d/%d", trial, u, p, len(refU), len(refP))
		}
	}
}
