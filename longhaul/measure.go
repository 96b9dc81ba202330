package longhaul

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat"

	"netaware/comm"
)

// MeasureOptions sets up Measure.
type MeasureOptions struct {
	Src, Dst int
	Size     int   // message bytes
	Helpers  []int // helpers per side to measure; 0 (one stream) and 1 (calibration) are always measured
	Reps     int   // transfers per configuration (median kept)
	Tol      float64
	Tag      int // first of the user tags Measure uses (it uses len(configs)+2)
}

// DefaultMeasureOptions are the experiment 'netaware longhaul' runs: a
// 64 MiB message, 1, 2, 3 and 5 helpers per side, the median of 3
// transfers, and Eq. 3.2's pick within 5% of its best prediction. Dst is
// -1: the caller chooses (the CLI takes the middle rank).
func DefaultMeasureOptions() MeasureOptions {
	return MeasureOptions{Src: 0, Dst: -1, Size: 64 << 20, Helpers: []int{1, 2, 3, 5}, Reps: 3, Tol: 0.05, Tag: 7100}
}

// Row is one measured configuration.
type Row struct {
	HelpersPerSide int     `json:"helpers_per_side"`
	Pieces         int     `json:"pieces"`
	Seconds        float64 `json:"seconds"`
	Speedup        float64 `json:"speedup"`
	PredictedS     float64 `json:"eq32_seconds"`
}

// Report is what Measure found, on the sender's rank.
type Report struct {
	Src        int     `json:"src"`
	Dst        int     `json:"dst"`
	Size       int     `json:"size_bytes"`
	SrcSide    []int   `json:"src_side_helpers"` // candidate helpers, nearest first
	DstSide    []int   `json:"dst_side_helpers"`
	Model      Model   `json:"model"`
	Rows       []Row   `json:"rows"`
	Chosen     int     `json:"eq32_helpers_per_side"`
	Best       int     `json:"best_measured_helpers_per_side"`
	ChosenLoss float64 `json:"eq32_choice_loss"` // chosen time / best time - 1
	Note       string  `json:"note,omitempty"`
}

// Measure runs seed 000 Sect. 3.2's experiment on every rank of c: it
// measures the round trip t_c from Src and Dst to every rank (a small
// ping-pong, minimum of 3), splits the other ranks between the two sides
// by how much nearer each end they are (splitSides), transfers Size bytes from Src to Dst with 0, 1 and
// each count of opt.Helpers helpers per side, fits Eq. 3.2's beta and m_c
// to the 0- and 1-helper times, and picks the helper count Eq. 3.2 gives
// (ChooseHelpers over the measured counts). A transfer's time is Src's
// start to the arrival of Dst's 1-byte acknowledgement, less t_c/2. Every
// rank must call it; the report is returned on Src, nil elsewhere.
func Measure(ctx context.Context, c comm.Comm, opt MeasureOptions) (*Report, error) {
	n, me := c.Size(), c.Rank()
	if opt.Src == opt.Dst || opt.Src < 0 || opt.Dst < 0 || opt.Src >= n || opt.Dst >= n {
		return nil, fmt.Errorf("longhaul: src %d, dst %d: want two different ranks of 0-%d", opt.Src, opt.Dst, n-1)
	}
	if opt.Size < 1 || opt.Reps < 1 || opt.Tag < 0 {
		return nil, fmt.Errorf("longhaul: size %d, reps %d, tag %d: want size and reps >= 1", opt.Size, opt.Reps, opt.Tag)
	}
	configs := []int{0, 1}
	for _, h := range opt.Helpers {
		if h < 0 {
			return nil, fmt.Errorf("longhaul: %d helpers", h)
		}
		if !slices.Contains(configs, h) {
			configs = append(configs, h)
		}
	}
	slices.Sort(configs)
	maxH := configs[len(configs)-1]
	if 2*maxH+2 > n {
		return nil, fmt.Errorf("longhaul: %d helpers per side need %d ranks, the world has %d", maxH, 2*maxH+2, n)
	}
	ctlTag := opt.Tag + len(configs)

	// Round trips from both ends to every rank.
	rttSrc, err := pingAll(ctx, c, opt.Src, ctlTag)
	if err != nil {
		return nil, err
	}
	rttDst, err := pingAll(ctx, c, opt.Dst, ctlTag)
	if err != nil {
		return nil, err
	}
	// The sender decides the sides and tells everyone.
	var sides []int // src side, then dst side, each maxH long
	switch me {
	case opt.Dst:
		if err := c.Send(ctx, opt.Src, ctlTag, floats(rttDst)); err != nil {
			return nil, err
		}
	case opt.Src:
		b := make([]byte, 8*n)
		if _, err := c.Recv(ctx, opt.Dst, ctlTag, b); err != nil {
			return nil, err
		}
		rttDst = unfloats(b)
		src, dst := splitSides(opt.Src, opt.Dst, rttSrc, rttDst)
		if len(src) < maxH || len(dst) < maxH {
			err := fmt.Errorf("longhaul: %d ranks for rank %d's side and %d for rank %d's: %d helpers per side do not fit", len(src), opt.Src, len(dst), opt.Dst, maxH)
			sides = []int{-1}
			for r := 0; r < n; r++ {
				if r != me {
					c.Send(ctx, r, ctlTag, ints(sides)) // release the others
				}
			}
			return nil, err
		}
		sides = append(append(sides, src[:maxH]...), dst[:maxH]...)
		for r := 0; r < n; r++ {
			if r != me {
				if err := c.Send(ctx, r, ctlTag, ints(sides)); err != nil {
					return nil, err
				}
			}
		}
	}
	if me != opt.Src {
		b := make([]byte, 8*2*maxH+8)
		st, err := c.Recv(ctx, opt.Src, ctlTag, b)
		if err != nil {
			return nil, err
		}
		if sides = unints(b[:st.Count]); len(sides) == 1 {
			return nil, nil // the sender reports the error
		}
	}

	buf := make([]byte, 0)
	if me == opt.Src || me == opt.Dst {
		buf = make([]byte, opt.Size)
	}
	ack := make([]byte, 1)
	rows := make([]Row, len(configs))
	for k, h := range configs {
		p := Plan{Src: opt.Src, Dst: opt.Dst, SrcHelpers: sides[:h], DstHelpers: sides[maxH : maxH+h]}
		in := me == p.Src || me == p.Dst || slices.Contains(p.SrcHelpers, me) || slices.Contains(p.DstHelpers, me)
		if !in {
			continue
		}
		times := make([]float64, 0, opt.Reps)
		for rep := 0; rep < opt.Reps; rep++ {
			t0 := c.Now()
			if err := Transfer(ctx, c, p, opt.Tag+k, buf, opt.Size); err != nil {
				return nil, err
			}
			switch me {
			case p.Dst:
				if err := c.Send(ctx, p.Src, ctlTag, ack); err != nil {
					return nil, err
				}
			case p.Src:
				if _, err := c.Recv(ctx, p.Dst, ctlTag, ack); err != nil {
					return nil, err
				}
				times = append(times, (c.Now()-t0).Seconds()-rttSrc[p.Dst]/2)
			}
		}
		if me == p.Src {
			sort.Float64s(times)
			rows[k] = Row{HelpersPerSide: h, Pieces: p.Pieces(), Seconds: stat.Quantile(0.5, stat.Empirical, times, nil)}
		}
	}
	if me != opt.Src {
		return nil, nil
	}
	tc := rttSrc[opt.Dst]
	md, err := Fit(tc/2, tc, []Sample{
		{Bytes: float64(opt.Size), Pieces: rows[0].Pieces, Seconds: rows[0].Seconds},
		{Bytes: float64(opt.Size), Pieces: rows[1].Pieces, Seconds: rows[1].Seconds},
	})
	note := ""
	if errors.Is(err, ErrNoSyncCost) {
		// Eq. 3.1 without its synchronisation term: one stream is as good
		// as any split.
		md, err = Model{Alpha: tc / 2, Beta: math.Max(0, rows[0].Seconds-tc/2) / float64(opt.Size), Tc: tc}, nil
		note = "one helper per side was not faster than one stream: no synchronisation cost to remove (m_c unbounded), Eq. 3.2 needs no helpers"
	}
	if err != nil {
		return nil, err
	}
	rep := &Report{Note: note, Src: opt.Src, Dst: opt.Dst, Size: opt.Size, SrcSide: sides[:maxH], DstSide: sides[maxH:], Model: md, Rows: rows}
	rep.Chosen = md.chooseAmong(float64(opt.Size), configs, opt.Tol)
	best := 0
	for k := range rows {
		rows[k].Speedup = rows[0].Seconds / rows[k].Seconds
		rows[k].PredictedS = md.Time(float64(opt.Size), rows[k].Pieces)
		if rows[k].Seconds < rows[best].Seconds {
			best = k
		}
		if rows[k].HelpersPerSide == rep.Chosen {
			rep.ChosenLoss = rows[k].Seconds
		}
	}
	rep.Best = rows[best].HelpersPerSide
	rep.ChosenLoss = rep.ChosenLoss/rows[best].Seconds - 1
	return rep, nil
}

// chooseAmong is ChooseHelpers restricted to the given counts.
func (md Model) chooseAmong(m float64, counts []int, tol float64) int {
	best := math.Inf(1)
	for _, h := range counts {
		best = math.Min(best, md.Time(m, SymmetricPieces(h)))
	}
	for _, h := range counts {
		if md.Time(m, SymmetricPieces(h)) <= best*(1+tol) {
			return h
		}
	}
	return counts[len(counts)-1]
}

// pingAll measures, on rank from, the round trip of a 1-byte message to
// every other rank (the minimum of 3); every rank takes part. The result
// is meaningful on rank from only; its own entry is 0.
func pingAll(ctx context.Context, c comm.Comm, from, tag int) ([]float64, error) {
	n, me := c.Size(), c.Rank()
	rtt := make([]float64, n)
	b := make([]byte, 1)
	for r := 0; r < n; r++ {
		if r == from || (me != from && me != r) {
			continue
		}
		best := time.Duration(math.MaxInt64)
		for i := 0; i < 3; i++ {
			if me == from {
				t0 := c.Now()
				if err := c.Send(ctx, r, tag, b); err != nil {
					return nil, err
				}
				if _, err := c.Recv(ctx, r, tag, b); err != nil {
					return nil, err
				}
				best = min(best, c.Now()-t0)
			} else {
				if _, err := c.Recv(ctx, from, tag, b); err != nil {
					return nil, err
				}
				if err := c.Send(ctx, from, tag, b); err != nil {
					return nil, err
				}
			}
		}
		if me == from {
			rtt[r] = best.Seconds()
		}
	}
	return rtt, nil
}

// splitSides orders every rank but src and dst by how much nearer src
// than dst it is (rttSrc - rttDst, ties by rank): the sender's side takes
// helpers from the front, the receiver's from the back. Across a long link
// each end's own site comes first; on a flat network (a LAN, loopback) the
// sides still fill, from whichever ranks lean their way.
func splitSides(src, dst int, rttSrc, rttDst []float64) (srcSide, dstSide []int) {
	var rs []int
	for r := range rttSrc {
		if r != src && r != dst {
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rttSrc[rs[i]]-rttDst[rs[i]] < rttSrc[rs[j]]-rttDst[rs[j]] })
	half := len(rs) / 2
	srcSide = append(srcSide, rs[:half]...)
	for i := len(rs) - 1; i >= half; i-- {
		dstSide = append(dstSide, rs[i])
	}
	return srcSide, dstSide
}

func floats(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func unfloats(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

func ints(v []int) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(x)))
	}
	return b
}

func unints(b []byte) []int {
	v := make([]int, len(b)/8)
	for i := range v {
		v[i] = int(int64(binary.LittleEndian.Uint64(b[8*i:])))
	}
	return v
}
