package topo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CompressHostlist writes names in Slurm's hostlist syntax: names that differ
// only in a trailing number of the same width are merged into ranges, e.g.
// a00,a01,a02,a05 -> a[00-02,05]. Names keep their first-appearance order by
// prefix; numbers are sorted within a prefix. Width is kept exact (a9 and
// a10 stay apart), so that expanding the result gives back the same names.
func CompressHostlist(names []string) string {
	type key struct {
		prefix string
		width  int
	}
	var order []key
	nums := map[key][]int{}
	plain := map[string]bool{}
	var items []string // output pieces, in order of first appearance
	slot := map[key]int{}
	for _, n := range names {
		p, digits := splitTrailingNumber(n)
		if digits == "" {
			if !plain[n] {
				plain[n] = true
				items = append(items, n)
			}
			continue
		}
		v, err := strconv.Atoi(digits)
		if err != nil || len(digits) > 9 {
			if !plain[n] {
				plain[n] = true
				items = append(items, n)
			}
			continue
		}
		// Zero-padded numbers only merge with numbers of the same width
		// (a08..a10); unpadded ones merge whatever their length (tux[0-3,12]),
		// so that expansion, which pads to the width of a range's lower
		// bound, gives back the same names.
		k := key{p, 0}
		if padded := digits[0] == '0' && len(digits) > 1; padded {
			k.width = len(digits)
		} else if _, ok := nums[key{p, len(digits)}]; ok {
			k.width = len(digits)
		}
		if _, ok := nums[k]; !ok {
			order = append(order, k)
			slot[k] = len(items)
			items = append(items, "")
		}
		nums[k] = append(nums[k], v)
	}
	for _, k := range order {
		vs := nums[k]
		sort.Ints(vs)
		vs = uniqInts(vs)
		if len(vs) == 1 {
			items[slot[k]] = fmt.Sprintf("%s%0*d", k.prefix, k.width, vs[0])
			continue
		}
		var parts []string
		for i := 0; i < len(vs); {
			j := i
			for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
				j++
			}
			if i == j {
				parts = append(parts, fmt.Sprintf("%0*d", k.width, vs[i]))
			} else {
				parts = append(parts, fmt.Sprintf("%0*d-%0*d", k.width, vs[i], k.width, vs[j]))
			}
			i = j + 1
		}
		items[slot[k]] = k.prefix + "[" + strings.Join(parts, ",") + "]"
	}
	return strings.Join(items, ",")
}

func uniqInts(v []int) []int {
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func splitTrailingNumber(s string) (prefix, digits string) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:]
}

// maxHostlistExpansion bounds what one expression may expand to, so that a
// hostile file like n[0-999999999] is an error rather than an OOM.
const maxHostlistExpansion = 1 << 20

// ExpandHostlist expands Slurm's hostlist syntax: comma-separated names, each
// with at most one bracket of comma-separated numbers and ranges, e.g.
// "tux[0-3,12],login" -> tux0..tux3, tux12, login. A range keeps the width of
// its lower bound (a[08-10] -> a08, a09, a10). Text after the bracket is kept
// (n[1-2]-ib -> n1-ib, n2-ib).
func ExpandHostlist(expr string) ([]string, error) {
	var out []string
	for _, item := range splitTopLevel(expr) {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("hostlist %q: empty name", expr)
		}
		open := strings.IndexByte(item, '[')
		if open < 0 {
			if strings.ContainsAny(item, "]") {
				return nil, fmt.Errorf("hostlist %q: unbalanced ']' in %q", expr, item)
			}
			out = append(out, item)
			continue
		}
		end := strings.IndexByte(item[open:], ']')
		if end < 0 {
			return nil, fmt.Errorf("hostlist %q: unclosed '[' in %q", expr, item)
		}
		end += open
		prefix, body, suffix := item[:open], item[open+1:end], item[end+1:]
		if strings.ContainsAny(suffix, "[]") || strings.ContainsAny(prefix, "]") {
			return nil, fmt.Errorf("hostlist %q: only one bracket per name is supported in %q", expr, item)
		}
		for _, r := range strings.Split(body, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a < 0 || b < a || lo == "" || hi == "" {
				return nil, fmt.Errorf("hostlist %q: bad range %q", expr, r)
			}
			if len(out)+(b-a+1) > maxHostlistExpansion {
				return nil, fmt.Errorf("hostlist %q: expands to more than %d names", expr, maxHostlistExpansion)
			}
			for v := a; v <= b; v++ {
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, len(lo), v, suffix))
			}
		}
	}
	return out, nil
}

// splitTopLevel splits on commas outside brackets.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}
