package cluster

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// Every algorithm of the registry runs on a complete two-group line and
// gives valid levels ending in "all"; auto and agglomerative split the
// two groups.
func TestRunEveryAlgorithm(t *testing.T) {
	d := bLine(0, 1, 2, 3, 20, 21, 22, 23)
	for _, a := range Algorithms {
		opt := DefaultOptions()
		opt.Algorithm = a
		r, err := Run(d, nil, opt)
		if err != nil {
			t.Errorf("%s: %v", a, err)
			continue
		}
		last := r.Levels[len(r.Levels)-1]
		if last.Name != "all" {
			t.Errorf("%s: last level %q", a, last.Name)
		}
		if a == "auto" || a == "agglomerative" {
			found := false
			for _, l := range r.Levels {
				found = found || reflect.DeepEqual(l.Groups, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}})
			}
			if !found {
				t.Errorf("%s: levels %+v miss the two groups", a, r.Levels)
			}
		}
	}
	if _, err := Run(d, nil, Options{Algorithm: "kmeans", Steps: 50, Gap: DefaultGapOptions()}); err == nil {
		t.Error("unknown algorithm accepted")
	}
}

// Seed 004 Sect. 3: two sites monitored on their own (no pair across),
// site 1 in two subnets (0,1 at 1.0; 2,3 at 1.0; 1.5 between). ECO keeps
// the three subnets, auto adds the two sites, and an algorithm that needs
// every pair is refused with the count.
func TestEstefanelSect3RunIncomplete(t *testing.T) {
	m := NewMatrix(6)
	for i := range m.Data {
		m.Data[i] = math.NaN()
	}
	for i := 0; i < 6; i++ {
		m.Set(i, i, 0)
	}
	m.Set(0, 1, 1)
	m.Set(2, 3, 1)
	for _, p := range [][2]int{{0, 2}, {0, 3}, {1, 2}, {1, 3}} {
		m.Set(p[0], p[1], 1.5)
	}
	m.Set(4, 5, 2)
	opt := DefaultOptions()
	r, err := Run(m, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := [][][]int{{{0, 1}, {2, 3}, {4, 5}}, {{0, 1, 2, 3}, {4, 5}}, {{0, 1, 2, 3, 4, 5}}}
	var got [][][]int
	for _, l := range r.Levels {
		got = append(got, l.Groups)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("auto levels %v, want %v", got, want)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "8 of 15 pairs not measured") {
		t.Errorf("notes %q", r.Notes)
	}
	opt.Algorithm = "eco"
	if r, err = Run(m, nil, opt); err != nil || len(r.Levels) != 2 {
		t.Errorf("eco: %v, %+v", err, r)
	}
	opt.Algorithm = "agglomerative"
	if _, err := Run(m, nil, opt); err == nil || !strings.Contains(err.Error(), "8 of the 15 pairs") {
		t.Errorf("agglomerative on holes: %v", err)
	}
}

func TestMeasuredPointsAndSub(t *testing.T) {
	m := NewMatrix(4)
	for i := range m.Data {
		m.Data[i] = math.NaN()
	}
	m.Set(1, 3, 5)
	if got := MeasuredPoints(m); !reflect.DeepEqual(got, []int{1, 3}) {
		t.Fatalf("measured %v", got)
	}
	s := m.Sub([]int{3, 1})
	if s.N != 2 || s.At(0, 1) != 5 || s.At(1, 0) != 5 || MissingPairs(s) != 0 {
		t.Errorf("sub %+v", s)
	}
	if got := MeasuredComponents(m); !reflect.DeepEqual(got, Labels{0, 1, 2, 1}) {
		t.Errorf("components %v", got)
	}
}
