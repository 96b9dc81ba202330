package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// KMedoidsInit chooses the starting medoids of KMedoids.
type KMedoidsInit int

const (
	// BuildInit is PAM's greedy BUILD: the point with the least total
	// distance, then repeatedly the point that lowers the total deviation
	// most. Deterministic; O(n^2 k).
	BuildInit KMedoidsInit = iota
	// RandomInit draws k distinct points with the seeded generator.
	RandomInit
	// GivenInit starts from KMedoidsOptions.Medoids.
	GivenInit
)

// KMedoidsOptions tunes KMedoids. The zero value is BUILD then FasterPAM.
type KMedoidsOptions struct {
	Init    KMedoidsInit
	Seed    uint64 // RandomInit only
	Medoids []int  // GivenInit only: k distinct point indices
	// MaxPasses bounds the passes over the data (default 100); FasterPAM
	// usually converges in a handful.
	MaxPasses int
}

// KMedoidsResult is a k-medoids clustering.
type KMedoidsResult struct {
	Medoids []int   // point index of each cluster's medoid
	Labels  Labels  // Labels[i] = index into Medoids of i's nearest medoid
	Cost    float64 // total deviation: sum of distances to the nearest medoid
	Swaps   int     // swaps performed by FasterPAM
	Passes  int     // passes over the data, the last one without a swap
}

// KMedoids partitions the points of distance matrix d into k clusters around
// k medoids with FasterPAM (Schubert and Rousseeuw 2021, "Fast and eager
// k-medoids clustering"): for each non-medoid candidate x in turn, the change
// of total deviation of swapping x with every medoid is computed at once in
// O(n) from each point's nearest and second-nearest medoid distances and the
// medoids' removal losses (FastPAM1's shared accumulator), and the best swap
// for x is made immediately when it improves the cost (eager swapping). It
// stops after a full pass without an improving swap, so the result is a
// local optimum for single swaps (a PAM local optimum); time O(n^2) per
// pass. k = 1 returns the exact 1-medoid. Ties go to the lowest index
// (nearest medoid: the first in Medoids). Deterministic given the options.
func KMedoids(d *Matrix, k int, opt KMedoidsOptions) (*KMedoidsResult, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("k-medoids: %w", err)
	}
	n := d.N
	if k < 1 || k > n {
		if n == 0 && k == 0 {
			return &KMedoidsResult{Labels: Labels{}}, nil
		}
		return nil, fmt.Errorf("k-medoids: k = %d for %d points", k, n)
	}
	if opt.MaxPasses == 0 {
		opt.MaxPasses = 100
	}
	var med []int
	switch opt.Init {
	case BuildInit:
		med = pamBuild(d, k)
	case RandomInit:
		r := rand.New(rand.NewPCG(opt.Seed, 0x6b6d65646f696473))
		med = r.Perm(n)[:k]
	case GivenInit:
		if len(opt.Medoids) != k {
			return nil, fmt.Errorf("k-medoids: %d initial medoids for k = %d", len(opt.Medoids), k)
		}
		seen := make(map[int]bool)
		for _, m := range opt.Medoids {
			if m < 0 || m >= n || seen[m] {
				return nil, fmt.Errorf("k-medoids: initial medoid %d invalid or repeated", m)
			}
			seen[m] = true
		}
		med = append([]int(nil), opt.Medoids...)
	default:
		return nil, fmt.Errorf("k-medoids: unknown init %d", int(opt.Init))
	}
	res := &KMedoidsResult{Medoids: med}
	if k == 1 {
		best, bestSum := 0, math.Inf(1)
		for i := 0; i < n; i++ {
			if s := rowSum(d, i); s < bestSum {
				best, bestSum = i, s
			}
		}
		res.Medoids[0] = best
		res.Passes = 1
	} else {
		fasterPAM(d, res, opt.MaxPasses)
	}
	res.Labels = make(Labels, n)
	res.Cost = 0
	for o := 0; o < n; o++ {
		best := 0
		for i, m := range res.Medoids {
			if d.At(o, m) < d.At(o, res.Medoids[best]) {
				best = i
			}
		}
		res.Labels[o] = best
		res.Cost += d.At(o, res.Medoids[best])
	}
	return res, nil
}

func rowSum(d *Matrix, i int) float64 {
	s := 0.0
	for _, v := range d.Data[i*d.N : (i+1)*d.N] {
		s += v
	}
	return s
}

// pamBuild is PAM's greedy BUILD initialization.
func pamBuild(d *Matrix, k int) []int {
	n := d.N
	first, best := 0, math.Inf(1)
	for i := 0; i < n; i++ {
		if s := rowSum(d, i); s < best {
			first, best = i, s
		}
	}
	med := []int{first}
	isMed := make([]bool, n)
	isMed[first] = true
	near := make([]float64, n)
	copy(near, d.Data[first*n:(first+1)*n])
	for len(med) < k {
		pick, gain := -1, -1.0
		for c := 0; c < n; c++ {
			if isMed[c] {
				continue
			}
			g := 0.0
			for o, v := range d.Data[c*n : (c+1)*n] {
				if v < near[o] {
					g += near[o] - v
				}
			}
			if g > gain {
				pick, gain = c, g
			}
		}
		med = append(med, pick)
		isMed[pick] = true
		for o, v := range d.Data[pick*n : (pick+1)*n] {
			if v < near[o] {
				near[o] = v
			}
		}
	}
	return med
}

// pamCache holds, per point, the index (into the medoid list) of its nearest
// medoid and the distances to its nearest and second-nearest medoids.
type pamCache struct {
	nearest    []int
	dn, ds     []float64
	removeLoss []float64 // per medoid: cost increase if it were removed
	cost       float64   // total deviation
}

func newPAMCache(n, k int) *pamCache {
	return &pamCache{nearest: make([]int, n), dn: make([]float64, n), ds: make([]float64, n), removeLoss: make([]float64, k)}
}

func (c *pamCache) update(d *Matrix, med []int) {
	for o := 0; o < d.N; o++ {
		bi, bd, sd := -1, math.Inf(1), math.Inf(1)
		for i, m := range med {
			v := d.At(o, m)
			if v < bd {
				bi, sd, bd = i, bd, v
			} else if v < sd {
				sd = v
			}
		}
		c.nearest[o], c.dn[o], c.ds[o] = bi, bd, sd
	}
	for i := range c.removeLoss {
		c.removeLoss[i] = 0
	}
	c.cost = 0
	for o := 0; o < d.N; o++ {
		c.removeLoss[c.nearest[o]] += c.ds[o] - c.dn[o]
		c.cost += c.dn[o]
	}
}

// fasterPAM improves res.Medoids in place by eager swaps (k >= 2).
func fasterPAM(d *Matrix, res *KMedoidsResult, maxPasses int) {
	n, k := d.N, len(res.Medoids)
	isMed := make([]bool, n)
	for _, m := range res.Medoids {
		isMed[m] = true
	}
	cache := newPAMCache(n, k)
	cache.update(d, res.Medoids)
	delta := make([]float64, k)
	lastSwap := -1
	for res.Passes = 1; res.Passes <= maxPasses; res.Passes++ {
		for x := 0; x < n; x++ {
			if x == lastSwap {
				return // a full cycle since the last swap: converged
			}
			if isMed[x] {
				continue
			}
			copy(delta, cache.removeLoss)
			shared := 0.0 // gain of x for points that move to x whatever is removed
			for o, v := range d.Data[x*n : (x+1)*n] {
				switch {
				case v < cache.dn[o]:
					shared += v - cache.dn[o]
					delta[cache.nearest[o]] += cache.dn[o] - cache.ds[o]
				case v < cache.ds[o]:
					delta[cache.nearest[o]] += v - cache.ds[o]
				}
			}
			bi := 0
			for i := 1; i < k; i++ {
				if delta[i] < delta[bi] {
					bi = i
				}
			}
			change := delta[bi] + shared
			tol := 1e-12 * math.Max(1, math.Abs(cache.cost))
			if change < -tol {
				isMed[res.Medoids[bi]] = false
				isMed[x] = true
				res.Medoids[bi] = x
				res.Swaps++
				cache.update(d, res.Medoids)
				lastSwap = x
			}
		}
		if lastSwap < 0 {
			return // first pass made no swap
		}
	}
	res.Passes = maxPasses
}
