package cluster

import "fmt"

// Parameter spaces for the automatic search. The seed gives SSSTree's
// (0, 5) and the distance range for thresholds; the others are ours.
var (
	// SSSAlphaSpace covers flat SSS completely: with M the largest
	// distance, alpha >= 1 always yields one cluster.
	SSSAlphaSpace = Space{Low: 0, High: 1}
	// ECOBoundSpace scans ECO's latency bound from 0 to 100%.
	ECOBoundSpace = Space{Low: 0, High: 1}
	// LouvainResolutionSpace scans the modularity resolution; 0 is not a
	// valid resolution, so the scan starts at 0.1.
	LouvainResolutionSpace = Space{Low: 0.1, High: 4.1}
)

// ClusterCountSpace is [1, n) in steps of 1 for methods given a number of
// clusters (k-medoids, k-means, spectral): the seed's exhaustive search.
func ClusterCountSpace(n int) Space { return Space{Low: 1, High: float64(n), Integer: true} }

// SearchSSS picks SSS's alpha by silhouette over SSSAlphaSpace.
func SearchSSS(d *Matrix, k int) (*SearchResult, error) {
	return LinearSearch(SSSAlphaSpace, k, func(x float64) (Labels, error) { return SSS(d, x) }, SilhouetteCriterion(d))
}

// SearchSSSTree picks SSSTree's alpha by silhouette of the partition at
// the given depth (1 = the root's children) over SSSTreeAlphaSpace.
func SearchSSSTree(d *Matrix, depth, k int) (*SearchResult, error) {
	if depth < 1 {
		return nil, fmt.Errorf("cluster search ssstree: depth %d, want >= 1", depth)
	}
	return LinearSearch(SSSTreeAlphaSpace, k, func(x float64) (Labels, error) {
		t, err := SSSTree(d, x, 0)
		if err != nil {
			return nil, err
		}
		return t.Flat(d.N, depth)
	}, SilhouetteCriterion(d))
}

// SearchECO picks ECO's bound by silhouette over ECOBoundSpace.
func SearchECO(d *Matrix, k int) (*SearchResult, error) {
	return LinearSearch(ECOBoundSpace, k, func(x float64) (Labels, error) { return ECO(d, x) }, SilhouetteCriterion(d))
}

// SearchDBSCAN picks DBSCAN's eps over the seed's (min A, max A).
func SearchDBSCAN(d *Matrix, minPts, k int) (*SearchResult, error) {
	s, err := DistanceSpace(d)
	if err != nil {
		return nil, err
	}
	return LinearSearch(s, k, func(x float64) (Labels, error) { return DBSCAN(d, x, minPts) }, SilhouetteCriterion(d))
}

// SearchConnectedComponents picks the threshold over (min A, max A).
func SearchConnectedComponents(d *Matrix, k int) (*SearchResult, error) {
	s, err := DistanceSpace(d)
	if err != nil {
		return nil, err
	}
	return LinearSearch(s, k, func(x float64) (Labels, error) { return ConnectedComponents(d, x) }, SilhouetteCriterion(d))
}

// SearchLouvain picks the resolution of Louvain on the similarity sim by
// the silhouette on the matching distance dist (e.g. 1/bandwidth).
func SearchLouvain(sim, dist *Matrix, seed uint64, k int) (*SearchResult, error) {
	if sim == nil || dist == nil || sim.N != dist.N {
		return nil, fmt.Errorf("cluster search louvain: similarity and distance matrices differ in size")
	}
	return LinearSearch(LouvainResolutionSpace, k, func(x float64) (Labels, error) {
		l, _, err := Louvain(sim, x, seed)
		return l, err
	}, SilhouetteCriterion(dist))
}

// SearchKMedoids picks the number of clusters for k-medoids (FasterPAM,
// BUILD initialisation) by silhouette over the seed's exhaustive [1, n).
func SearchKMedoids(d *Matrix, k int) (*SearchResult, error) {
	if d == nil {
		return nil, fmt.Errorf("cluster search kmedoids: nil matrix")
	}
	return LinearSearch(ClusterCountSpace(d.N), k, func(x float64) (Labels, error) {
		r, err := KMedoids(d, int(x), KMedoidsOptions{})
		if err != nil {
			return nil, err
		}
		return r.Labels, nil
	}, SilhouetteCriterion(d))
}
