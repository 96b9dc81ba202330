package cluster

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"sort"
	"testing"
)

// goldenB is cluster/testdata/golden_b.json, written by golden_b.py with
// NetworkX and scikit-learn.
type goldenB struct {
	Louvain    []goldenGraph `json:"louvain"`
	Modularity []goldenGraph `json:"modularity"`
	MST        []struct {
		Name  string       `json:"name"`
		N     int          `json:"n"`
		W     [][]*float64 `json:"w"`
		Edges [][2]int     `json:"edges"`
		Total float64      `json:"total"`
	} `json:"mst"`
	Silhouette []struct {
		Name       string      `json:"name"`
		N          int         `json:"n"`
		D          [][]float64 `json:"d"`
		Labels     Labels      `json:"labels"`
		Silhouette float64     `json:"silhouette"`
	} `json:"silhouette"`
}

type goldenGraph struct {
	Name        string      `json:"name"`
	N           int         `json:"n"`
	W           [][]float64 `json:"w"`
	Resolution  float64     `json:"resolution"`
	Communities [][]int     `json:"communities"`
	Modularity  float64     `json:"modularity"`
}

func loadGoldenB(t *testing.T) *goldenB {
	t.Helper()
	b, err := os.ReadFile("testdata/golden_b.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenB
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("testdata/golden_b.json: %v", err)
	}
	return &g
}

func matrixFrom(t *testing.T, rows [][]float64) *Matrix {
	t.Helper()
	m := NewMatrix(len(rows))
	for i, r := range rows {
		copy(m.Data[i*m.N:], r)
	}
	return m
}

func labelsFromCommunities(n int, comms [][]int) Labels {
	l := make(Labels, n)
	for c, members := range comms {
		for _, p := range members {
			l[p] = c
		}
	}
	return Canonical(l)
}

func closeRel(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestGoldenLouvainNetworkX(t *testing.T) {
	g := loadGoldenB(t)
	if len(g.Louvain) == 0 {
		t.Fatal("no louvain fixtures")
	}
	for _, c := range g.Louvain {
		m := matrixFrom(t, c.W)
		want := labelsFromCommunities(c.N, c.Communities)
		for seed := uint64(0); seed < 3; seed++ {
			got, q, err := Louvain(m, c.Resolution, seed)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s seed %d: partition\n got %v\nwant %v", c.Name, seed, Groups(got), Groups(want))
			}
			if !closeRel(q, c.Modularity, 1e-9) {
				t.Errorf("%s: Q = %v, networkx %v", c.Name, q, c.Modularity)
			}
		}
	}
}

func TestGoldenModularityNetworkX(t *testing.T) {
	g := loadGoldenB(t)
	for _, c := range append(g.Modularity, g.Louvain...) {
		q, err := Modularity(matrixFrom(t, c.W), labelsFromCommunities(c.N, c.Communities), c.Resolution)
		if err != nil {
			t.Fatal(err)
		}
		if !closeRel(q, c.Modularity, 1e-9) {
			t.Errorf("%s: Q = %v, networkx %v", c.Name, q, c.Modularity)
		}
	}
}

func TestGoldenMaximumSpanningTreeNetworkX(t *testing.T) {
	g := loadGoldenB(t)
	if len(g.MST) == 0 {
		t.Fatal("no mst fixtures")
	}
	for _, c := range g.MST {
		m := NewMatrix(c.N)
		for i, row := range c.W {
			for j, v := range row {
				if v == nil {
					m.Data[i*c.N+j] = math.NaN()
				} else {
					m.Data[i*c.N+j] = *v
				}
			}
		}
		tree, err := MaximumSpanningTree(m)
		if err != nil {
			t.Fatal(err)
		}
		var edges [][2]int
		for _, e := range tree {
			edges = append(edges, [2]int{e.I, e.J})
		}
		sort.Slice(edges, func(a, b int) bool {
			if edges[a][0] != edges[b][0] {
				return edges[a][0] < edges[b][0]
			}
			return edges[a][1] < edges[b][1]
		})
		if !reflect.DeepEqual(edges, c.Edges) {
			t.Errorf("%s: edges\n got %v\nwant %v", c.Name, edges, c.Edges)
		}
		if !closeRel(TreeWeight(tree), c.Total, 1e-12) {
			t.Errorf("%s: weight %v, networkx %v", c.Name, TreeWeight(tree), c.Total)
		}
	}
}
