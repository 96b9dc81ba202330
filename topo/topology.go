// Package topo is the topology data model that discovery writes and that
// collectives, tuning and reports read, and its file formats (docs/topology-format.md).
package topo

// Version is the topology.json format version this package writes.
const Version = 1

// Topology is one topology.json document.
type Topology struct {
	Version int     `json:"version"`
	Size    int     `json:"size"`
	Ranks   []Rank  `json:"ranks"`
	Levels  []Level `json:"levels"`
	Tree    *Tree   `json:"tree,omitempty"`
	// BandwidthTree is the swarm method's tree of bandwidth groups.
	BandwidthTree *BandwidthTree `json:"bandwidth_tree,omitempty"`
	Method        *Method        `json:"method,omitempty"`
	Measurements  *Measurements  `json:"measurements,omitempty"`
}

// Rank is what a rank reported about itself; the hints are nil when unknown
// or when discovery ran blind.
type Rank struct {
	Rank   int    `json:"rank"`
	Host   string `json:"host,omitempty"`
	Core   *int   `json:"core,omitempty"`
	Socket *int   `json:"socket,omitempty"`
}

// Level is a partition of all ranks; levels go from finest to coarsest and
// each is a coarsening of the one before.
type Level struct {
	Name   string  `json:"name"`
	Groups [][]int `json:"groups"`
}

// Tree is an undirected tree whose leaves are ranks and whose inner nodes are
// inferred switches.
type Tree struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is a tree node; Rank is nil for an inferred switch.
type Node struct {
	ID   string `json:"id"`
	Rank *int   `json:"rank,omitempty"`
}

// Edge is a tree edge with its one-way latency and, when measured, the
// bandwidth available on it.
type Edge struct {
	A         string   `json:"a"`
	B         string   `json:"b"`
	LatencyS  float64  `json:"latency_s"`
	Bandwidth *float64 `json:"bandwidth_Bps,omitempty"`
}

// Method records the algorithm that produced the topology.
type Method struct {
	Name   string         `json:"name"`
	Params map[string]any `json:"params,omitempty"`
}

// Measurements records what discovery cost.
type Measurements struct {
	PairsMeasured int     `json:"pairs_measured"`
	PairsTotal    int     `json:"pairs_total"`
	VirtualTimeS  float64 `json:"virtual_time_s,omitempty"`
	WallTimeS     float64 `json:"wall_time_s,omitempty"`
}
