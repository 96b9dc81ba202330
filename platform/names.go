package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// maxRangeNames bounds one bracket range so that a typo such as "n[1-999999999]"
// is an error instead of an exhausted machine.
const maxRangeNames = MaxHosts

// ExpandNames expands one name or a bracket range: "a[00-14]" gives a00..a14
// (the lower bound's leading zeros set the width), "n[1-64]" gives n1..n64.
// Text may follow the bracket ("n[1-4]-ib").
func ExpandNames(spec string) ([]string, error) {
	open := strings.IndexByte(spec, '[')
	if open < 0 {
		if err := checkName(spec); err != nil {
			return nil, err
		}
		return []string{spec}, nil
	}
	closing := strings.IndexByte(spec[open:], ']')
	if closing < 0 {
		return nil, fmt.Errorf("%q: unclosed '['", spec)
	}
	closing += open
	prefix, body, suffix := spec[:open], spec[open+1:closing], spec[closing+1:]
	if strings.ContainsAny(suffix, "[]") || strings.ContainsAny(prefix, "]") {
		return nil, fmt.Errorf("%q: only one bracket range is allowed", spec)
	}
	loS, hiS, ok := strings.Cut(body, "-")
	if !ok || !allDigits(loS) || !allDigits(hiS) {
		return nil, fmt.Errorf("%q: want a range like [00-14] or [1-64]", spec)
	}
	lo, err1 := strconv.Atoi(loS)
	hi, err2 := strconv.Atoi(hiS)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%q: range bound out of range", spec)
	}
	if lo > hi {
		return nil, fmt.Errorf("%q: range runs backwards", spec)
	}
	if hi-lo+1 > maxRangeNames {
		return nil, fmt.Errorf("%q: more than %d names in one range", spec, maxRangeNames)
	}
	width := 0
	if len(loS) > 1 && loS[0] == '0' {
		width = len(loS)
	}
	names := make([]string, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		n := strconv.Itoa(i)
		if len(n) < width {
			n = strings.Repeat("0", width-len(n)) + n
		}
		name := prefix + n + suffix
		if err := checkName(name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// checkName rejects names that could not be written back into a platform
// file, a SimGrid XML file or a topology file unambiguously.
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("[]<>&\"',", r) {
			return fmt.Errorf("%q: name contains %q", s, r)
		}
	}
	return nil
}
