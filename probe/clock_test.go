package probe

import (
	"testing"
	"time"
)

// frozen is a clock that computation does not move; ticking moves by a
// fixed step per read.
type frozen struct{ reads int }

func (f *frozen) Now() time.Duration { f.reads++; return 0 }

type ticking struct{ t time.Duration }

func (k *ticking) Now() time.Duration { k.t += 7; return k.t }

func TestClockOverheadFrozenClockStopsEarly(t *testing.T) {
	f := &frozen{}
	if got := ClockOverhead(f, 1000, 5); got != 0 {
		t.Errorf("frozen clock: overhead %v, want 0", got)
	}
	if f.reads != 2 {
		t.Errorf("frozen clock read %d times, want 2 (one loop, then stop)", f.reads)
	}
	// A clock that moves by 7 ns per read: t_b = 7 ns / 1000 calls
	// rounds to 0, each timed call reads 7 ns: the overhead is 7 ns.
	if got := ClockOverhead(&ticking{}, 1000, 2); got != 7 {
		t.Errorf("ticking clock: overhead %v, want 7ns", got)
	}
}
