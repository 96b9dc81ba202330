package cluster

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// LabeledMatrix is a matrix read from outside (ReadMatrixCSV) with the
// label of each point.
type LabeledMatrix struct {
	Labels []string
	M      *Matrix
}

// ReadMatrixCSV reads a pairwise matrix (distances, or bandwidths, as the
// caller decides) from CSV: the first row holds the column labels after a
// corner cell, and every other row a label followed by one value per column.
// Rows may come in any order but must name the same points as the columns,
// each once. An empty cell is a missing pair (NaN); the diagonal is ignored.
// The two cells of a pair are averaged (directed measurements), and one
// alone stands for both. Values must be finite and non-negative; errors
// name the line and column (both from 1) of the bad cell.
func ReadMatrixCSV(r io.Reader) (*LabeledMatrix, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("csv: empty file: want a header row of labels")
	}
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	hline, _ := cr.FieldPos(0)
	if len(header) < 2 {
		return nil, fmt.Errorf("csv: line %d: header has %d cells: want a corner cell and at least one label", hline, len(header))
	}
	labels := make([]string, len(header)-1)
	index := map[string]int{}
	for k, h := range header[1:] {
		h = strings.TrimSpace(h)
		_, col := cr.FieldPos(k + 1)
		if h == "" {
			return nil, fmt.Errorf("csv: line %d, column %d: empty label", hline, col)
		}
		if prev, dup := index[h]; dup {
			return nil, fmt.Errorf("csv: line %d, column %d: label %q repeats column %d's", hline, col, h, prev+2)
		}
		index[h] = k
		labels[k] = h
	}
	n := len(labels)
	raw := make([]float64, n*n) // raw[i*n+j]: row i, column j; NaN = empty
	for i := range raw {
		raw[i] = math.NaN()
	}
	seen := make([]int, n) // line of each point's row, 0 = none yet
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank line
		}
		label := strings.TrimSpace(rec[0])
		i, ok := index[label]
		if !ok {
			return nil, fmt.Errorf("csv: line %d, column 1: row label %q is not a column label", line, label)
		}
		if seen[i] != 0 {
			return nil, fmt.Errorf("csv: line %d, column 1: row %q repeats line %d", line, label, seen[i])
		}
		seen[i] = line
		if len(rec) != n+1 {
			return nil, fmt.Errorf("csv: line %d: %d cells: want %d (a label and %d values)", line, len(rec), n+1, n)
		}
		for k, cell := range rec[1:] {
			cell = strings.TrimSpace(cell)
			if cell == "" || k == i {
				continue
			}
			_, col := cr.FieldPos(k + 1)
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return nil, fmt.Errorf("csv: line %d, column %d: %q is not a number", line, col, cell)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("csv: line %d, column %d: %v: want a finite value >= 0 (leave the cell empty for a missing pair)", line, col, v)
			}
			raw[i*n+k] = v
		}
	}
	for i, l := range seen {
		if l == 0 {
			return nil, fmt.Errorf("csv: no row for label %q (column %d)", labels[i], i+2)
		}
	}
	m, _, err := symmetrize(n, func(i, j int) (float64, bool) {
		v := raw[i*n+j]
		return v, !math.IsNaN(v)
	}, "csv")
	if err != nil {
		return nil, err
	}
	return &LabeledMatrix{Labels: labels, M: m}, nil
}

// WriteMatrixCSV writes m in the form ReadMatrixCSV reads, missing pairs
// as empty cells and the diagonal empty.
func WriteMatrixCSV(w io.Writer, labels []string, m *Matrix) error {
	if m == nil || len(labels) != m.N {
		return fmt.Errorf("csv: %d labels for a matrix of %d points", len(labels), matrixN(m))
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{""}, labels...)); err != nil {
		return err
	}
	for i, l := range labels {
		rec := []string{l}
		for j := range labels {
			v := m.At(i, j)
			if i == j || IsMissing(v) {
				rec = append(rec, "")
			} else {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func matrixN(m *Matrix) int {
	if m == nil {
		return 0
	}
	return m.N
}

// Distances reads the matrix as distances (the similarity their inverse),
// or with bandwidth as bandwidths (the similarity; the distance 1/bw), for
// Run.
func (lm *LabeledMatrix) Distances(bandwidth bool) (dist, sim *Matrix, err error) {
	if !bandwidth {
		return lm.M, InverseSimilarity(lm.M), nil
	}
	if dist, err = BandwidthDistance(lm.M); err != nil {
		return nil, nil, err
	}
	return dist, lm.M, nil
}
