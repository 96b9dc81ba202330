package model

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"netaware/units"
)

// The files and flags a prediction is asked with: patterns of transfers and
// matrices of byte counts.

// ReadPattern reads a pattern file: concurrent transfers, one "src dst
// bytes" a line among ranks 0..n-1 (# starts a comment; sizes like 8MiB).
func ReadPattern(path string, n int) ([]Transfer, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []Transfer
	sc := bufio.NewScanner(fh)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fs := strings.Fields(text)
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"src dst bytes\", got %q", path, line, sc.Text())
		}
		src, e1 := strconv.Atoi(fs[0])
		dst, e2 := strconv.Atoi(fs[1])
		b, e3 := units.ParseSize(fs[2])
		if e1 != nil || e2 != nil || e3 != nil || src < 0 || dst < 0 || src >= n || dst >= n || src == dst || b < 0 {
			return nil, fmt.Errorf("%s:%d: %q: want two distinct ranks in 0..%d and a size", path, line, sc.Text(), n-1)
		}
		out = append(out, Transfer{Src: src, Dst: dst, Bytes: float64(b)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no transfer", path)
	}
	return out, nil
}

// ParseFlows reads the pattern written inline: "0>15:8MiB,1>15:8MiB".
func ParseFlows(s string, n int) ([]Transfer, error) {
	var out []Transfer
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		pair, size, ok1 := strings.Cut(part, ":")
		a, b, ok2 := strings.Cut(pair, ">")
		src, e1 := strconv.Atoi(strings.TrimSpace(a))
		dst, e2 := strconv.Atoi(strings.TrimSpace(b))
		m, e3 := units.ParseSize(strings.TrimSpace(size))
		if !ok1 || !ok2 || e1 != nil || e2 != nil || e3 != nil || src < 0 || dst < 0 || src >= n || dst >= n || src == dst {
			return nil, fmt.Errorf("%q: want src>dst:bytes with two distinct ranks in 0..%d", part, n-1)
		}
		out = append(out, Transfer{Src: src, Dst: dst, Bytes: float64(m)})
	}
	return out, nil
}

// ReadCounts reads rows of byte counts (sizes like 8MiB allowed, commas or
// blanks between them, # starts a comment): with cols > 1, cols rows of cols
// counts (an alltoallv matrix); else rows of any length.
func ReadCounts(path string, cols int) ([][]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]float64
	for i, line := range strings.Split(string(data), "\n") {
		text, _, _ := strings.Cut(line, "#")
		fs := strings.Fields(strings.ReplaceAll(text, ",", " "))
		if len(fs) == 0 {
			continue
		}
		row := make([]float64, len(fs))
		for j, s := range fs {
			b, err := units.ParseSize(s)
			if err != nil || b < 0 {
				return nil, fmt.Errorf("%s:%d: %q is not a byte count", path, i+1, s)
			}
			row[j] = float64(b)
		}
		if cols > 1 && len(row) != cols {
			return nil, fmt.Errorf("%s:%d: %d counts, want %d", path, i+1, len(row), cols)
		}
		out = append(out, row)
	}
	if cols > 1 && len(out) != cols {
		return nil, fmt.Errorf("%s: %d rows, want %d", path, len(out), cols)
	}
	return out, nil
}
