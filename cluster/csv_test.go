package cluster

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Three hosts, row order differs from the columns, one pair measured one
// way only, one pair measured both ways (averaged), b-c missing.
func TestReadMatrixCSVByHand(t *testing.T) {
	in := "# latencies in us\n,a,b,c\nb,1,,\na,,3,5\nc,7,,\n"
	lm, err := ReadMatrixCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lm.Labels, []string{"a", "b", "c"}) {
		t.Fatalf("labels %v", lm.Labels)
	}
	m := lm.M
	if m.At(0, 1) != 2 || m.At(1, 0) != 2 { // (3+1)/2
		t.Errorf("a-b = %v, want 2", m.At(0, 1))
	}
	if m.At(0, 2) != 6 { // (5+7)/2
		t.Errorf("a-c = %v, want 6", m.At(0, 2))
	}
	if !IsMissing(m.At(1, 2)) || !IsMissing(m.At(2, 1)) {
		t.Errorf("b-c = %v, want missing", m.At(1, 2))
	}
	if MissingPairs(m) != 1 {
		t.Errorf("missing %d, want 1", MissingPairs(m))
	}
}

func TestReadMatrixCSVErrorsNameLineAndColumn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty file"},
		{"x\n", "line 1: header has 1 cells"},
		{",a,a\n", "line 1, column 4: label \"a\" repeats column 2's"},
		{",a,\n", "line 1, column 4: empty label"},
		{",a,b\na,0,1\nb,1\n", "line 3: 2 cells: want 3"},
		{",a,b\na,0,x1\nb,1,0\n", "line 2, column 5: \"x1\" is not a number"},
		{",a,b\na,0,-1\nb,1,0\n", "line 2, column 5: -1: want a finite value"},
		{",a,b\na,0,Inf\n", "line 2, column 5: +Inf"},
		{",a,b\na,0,NaN\n", "line 2, column 5: NaN"},
		{",a,b\nc,0,1\n", "line 2, column 1: row label \"c\" is not a column label"},
		{",a,b\na,0,1\na,0,1\n", "line 3, column 1: row \"a\" repeats line 2"},
		{",a,b\na,0,1\n", "no row for label \"b\" (column 3)"},
		{",a,b\na,0,\"1\nb\n", "csv: record on line 2"},
	} {
		_, err := ReadMatrixCSV(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// Writing a random symmetric matrix with holes and reading it back gives
// the same matrix (values printed exactly, 'g' -1).
func TestMatrixCSVRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for n := 1; n < 12; n++ {
		m := NewMatrix(n)
		labels := make([]string, n)
		for i := range labels {
			labels[i] = "h" + strings.Repeat("x", i)
			for j := i + 1; j < n; j++ {
				v := r.Float64() * 1e-3
				if r.IntN(4) == 0 {
					v = math.NaN()
				}
				m.Set(i, j, v)
			}
		}
		var b bytes.Buffer
		if err := WriteMatrixCSV(&b, labels, m); err != nil {
			t.Fatal(err)
		}
		got, err := ReadMatrixCSV(&b)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for i := range m.Data {
			a, g := m.Data[i], got.M.Data[i]
			if a != g && !(math.IsNaN(a) && math.IsNaN(g)) {
				t.Fatalf("n=%d: entry %d: %v, read back %v", n, i, a, g)
			}
		}
	}
}

// FuzzReadMatrixCSV: any input either fails with an error or gives a
// square symmetric matrix with one label per point and entries that are
// missing or finite and non-negative.
func FuzzReadMatrixCSV(f *testing.F) {
	f.Add(",a,b,c\nb,1,,\na,,3,5\nc,7,,\n")
	f.Add(",a,b\na,0,\"1\nb\n")
	f.Add(",\"a,b\",c\n\"a,b\",,1e300\nc,2,\n")
	f.Add("\n\n,a\na,\n")
	f.Fuzz(func(t *testing.T, in string) {
		lm, err := ReadMatrixCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		m := lm.M
		if len(lm.Labels) != m.N || len(m.Data) != m.N*m.N {
			t.Fatalf("%d labels, matrix %d with %d entries", len(lm.Labels), m.N, len(m.Data))
		}
		for i := 0; i < m.N; i++ {
			for j := 0; j < m.N; j++ {
				v := m.At(i, j)
				if IsMissing(v) != IsMissing(m.At(j, i)) || (!IsMissing(v) && (v != m.At(j, i) || v < 0 || math.IsInf(v, 0))) {
					t.Fatalf("entry (%d,%d) = %v, (%d,%d) = %v", i, j, v, j, i, m.At(j, i))
				}
			}
		}
	})
}
