package longhaul

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoSyncCost is Fit's answer when more pieces were not faster: no
// synchronisation cost to remove (the window already covers the path).
var ErrNoSyncCost = errors.New("longhaul fit: no synchronisation cost in the samples (more pieces were not faster)")

// Model holds the parameters of seed 000's Eq. 3.1-3.2: a transfer of M
// bytes costs Alpha + Beta*M, plus Tc for every Mc bytes a single stream
// moves between two synchronisation messages (a TCP window's
// acknowledgement, a rendezvous handshake). The seed measured Tc = 0.02 s
// per Mc = 128 KB across Grid'5000 sites.
type Model struct {
	Alpha float64 // s
	Beta  float64 // s per byte
	Tc    float64 // s per synchronisation
	Mc    float64 // bytes between synchronisations
}

// Time is Eq. 3.2 (Mc = 0: no synchronisation term), alpha + beta*M + t_c * floor(M / ((n-1) * m_c)), for a
// message of m bytes split into pieces = n - 1 pieces crossing in
// parallel; pieces = 1 is Eq. 3.1, the unmodified transfer.
func (md Model) Time(m float64, pieces int) float64 {
	if pieces < 1 {
		pieces = 1
	}
	sync := 0.0
	if md.Mc > 0 {
		sync = md.Tc * math.Floor(m/(float64(pieces)*md.Mc))
	}
	return md.Alpha + md.Beta*m + sync
}

// Validate checks the parameters are finite and non-negative, Mc positive.
func (md Model) Validate() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"alpha", md.Alpha}, {"beta", md.Beta}, {"t_c", md.Tc}, {"m_c", md.Mc}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("longhaul model: %s = %v", v.name, v.x)
		}
	}
	if !(md.Mc > 0) {
		return fmt.Errorf("longhaul model: m_c = %v: want > 0", md.Mc)
	}
	return nil
}

// Sample is one measured transfer: m bytes in Pieces pieces took Seconds.
type Sample struct {
	Bytes   float64
	Pieces  int
	Seconds float64
}

// Fit estimates Beta and Mc of Eq. 3.2 from transfers measured with at
// least two different piece counts, given Alpha and Tc measured apart (a
// small message's one-way time and round trip). With the floor dropped,
// T - alpha = beta*M + (t_c/m_c) * M/(n-1) is linear in beta and t_c/m_c;
// least squares over the samples gives both. A negative beta (the
// bandwidth term hidden under the synchronisations) is taken as 0, and the
// synchronisation term refitted alone.
func Fit(alpha, tc float64, samples []Sample) (Model, error) {
	if !(tc > 0) || math.IsInf(tc, 0) || math.IsNaN(alpha) || alpha < 0 {
		return Model{}, fmt.Errorf("longhaul fit: t_c %v, alpha %v", tc, alpha)
	}
	var sxx, sxy, syy, sxr, syr float64 // x = M, y = M/pieces, r = T - alpha
	pieces := map[int]bool{}
	for i, s := range samples {
		if !(s.Bytes > 0) || s.Pieces < 1 || !(s.Seconds > 0) || math.IsInf(s.Seconds, 0) || math.IsInf(s.Bytes, 0) {
			return Model{}, fmt.Errorf("longhaul fit: sample %d: %+v", i, s)
		}
		x, y, r := s.Bytes, s.Bytes/float64(s.Pieces), s.Seconds-alpha
		sxx, sxy, syy, sxr, syr = sxx+x*x, sxy+x*y, syy+y*y, sxr+x*r, syr+y*r
		pieces[s.Pieces] = true
	}
	if len(pieces) < 2 {
		return Model{}, fmt.Errorf("longhaul fit: %d samples with %d distinct piece counts: want two or more counts", len(samples), len(pieces))
	}
	det := sxx*syy - sxy*sxy
	beta := (sxr*syy - syr*sxy) / det
	k := (sxx*syr - sxy*sxr) / det // t_c / m_c
	if beta < 0 {
		beta, k = 0, syr/syy
	}
	if !(k > 0) {
		return Model{}, ErrNoSyncCost
	}
	md := Model{Alpha: alpha, Beta: beta, Tc: tc, Mc: tc / k}
	return md, md.Validate()
}

// SymmetricPieces is the piece count with h helpers on each side: 2h + 1.
func SymmetricPieces(h int) int { return 2*h + 1 }

// ChooseHelpers picks the number of helpers per side, from 0 to max, for
// an m-byte message: the smallest whose Eq. 3.2 time is within tol
// (relative) of the best over that range. The seed's point: "the number of
// spawned MPI processes can be limited if we know in advance the message
// range"; helpers beyond the one that removes the last synchronisations
// only cost processes.
func (md Model) ChooseHelpers(m float64, max int, tol float64) int {
	counts := make([]int, max+1)
	for h := range counts {
		counts[h] = h
	}
	return md.chooseAmong(m, counts, tol)
}
