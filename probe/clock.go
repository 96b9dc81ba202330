package probe

import "time"

// busySink keeps the compiler from removing busy's loop (the Go analogue of
// seed 003 Fig. 3.7's volatile variable).
var busySink int

// busy is seed 003 Fig. 3.7: 300 increments of a variable the compiler must
// keep.
//
//go:noinline
func busy() {
	dummy := 42
	for i := 0; i < 300; i++ {
		dummy++
	}
	busySink += dummy
}

// Clock is what ClockOverhead needs: a clock to read.
type Clock interface{ Now() time.Duration }

// ClockOverhead measures the cost of reading c's clock as seed 003 Sect.
// 3.1.2 ("Accounting for clock overhead") does: time `calls` calls of
// busy() with one clock pair around the whole loop (t_b = average per
// call), then time the same number of calls each surrounded by its own
// clock pair (t = average of t_e - t_s); repeat `reps` times and return
// min(t) - min(t_b), clamped at 0. The seed uses calls = 1000, reps = 5.
// In the simulator reading the clock costs no virtual time and the result
// is 0.
func ClockOverhead(c Clock, calls, reps int) time.Duration {
	if calls < 1 {
		calls = 1000
	}
	if reps < 1 {
		reps = 5
	}
	minTB, minT := time.Duration(1<<62), time.Duration(1<<62)
	for r := 0; r < reps; r++ {
		start := c.Now()
		for i := 0; i < calls; i++ {
			busy()
		}
		end := c.Now()
		if r == 0 && end == start {
			// The clock did not move over `calls` calls of busy, a
			// tenth of a millisecond of CPU: it does not follow
			// computation (the simulator's virtual time), so reading
			// it costs nothing. The remaining 1.5 ms of busy loops
			// per rank were 4 s of a 4,096-rank simulation's CPU.
			return 0
		}
		tb := (end - start) / time.Duration(calls)
		var sum time.Duration
		for i := 0; i < calls; i++ {
			ts := c.Now()
			busy()
			sum += c.Now() - ts
		}
		t := sum / time.Duration(calls)
		minTB = min(minTB, tb)
		minT = min(minT, t)
	}
	if d := minT - minTB; d > 0 {
		return d
	}
	return 0
}
