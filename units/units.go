// Package units is netaware's one reading and printing of quantities: sizes
// ("64KiB"), bandwidths ("10Gbps", "1.25GBps") and times ("110us") in
// platform files and on command lines, and the way every table, summary and
// label prints them (3 significant digits, the largest unit that keeps the
// number at least 1; bandwidths in bits per second, as links are sold).
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// unit is a suffix meaning value x 10^exp10 / div. Scaling by a power of ten
// is done by parsing the number with the exponent appended, so "100us" is
// the double nearest to 1e-4 rather than 100 x 1e-6 (off by one ulp);
// div is a power of two (8 bits per byte, or 1), which divides exactly.
type unit struct {
	suffix string
	exp10  int
	div    float64
}

// Bandwidth units, in bytes per second. Lowercase b is bits, uppercase B
// bytes; K, M, G are decimal (1000) prefixes, as in networking.
var bandwidthUnits = []unit{
	{"Kbps", 3, 8}, {"Mbps", 6, 8}, {"Gbps", 9, 8},
	{"KBps", 3, 1}, {"MBps", 6, 1}, {"GBps", 9, 1},
	{"bps", 0, 8}, {"Bps", 0, 1},
}

const bandwidthWant = "want bps, Kbps, Mbps, Gbps, Bps, KBps, MBps, GBps"

// Time units, in seconds.
var timeUnits = []unit{{"ns", -9, 1}, {"us", -6, 1}, {"ms", -3, 1}, {"s", 0, 1}}

const timeWant = "want ns, us, ms, s"

// Size units, in bytes; binary prefixes only, so that "MB" (ambiguous
// between 10^6 and 2^20 in practice) is rejected rather than guessed.
var sizeUnits = []unit{{"KiB", 0, 1.0 / (1 << 10)}, {"MiB", 0, 1.0 / (1 << 20)}, {"GiB", 0, 1.0 / (1 << 30)}, {"B", 0, 1}}

const sizeWant = "want KiB, MiB, GiB, B, or a plain number of bytes"

// splitQuantity separates "10Gbps" into its number and unit suffix.
func splitQuantity(s string) (num, suffix string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' ||
			((c == 'e' || c == 'E') && i > 0 && i+1 < len(s) && (isDigit(s[i+1]) || s[i+1] == '-' || s[i+1] == '+')) {
			i++
			continue
		}
		break
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func parseNumber(num, orig string) (float64, error) {
	if num == "" {
		return 0, fmt.Errorf("%q: not a number", orig)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: not a number", orig)
	}
	return v, nil
}

func lookupUnit(table []unit, suffix string) (unit, bool) {
	for _, u := range table {
		if u.suffix == suffix {
			return u, true
		}
	}
	return unit{}, false
}

// scaled parses num in unit u.
func scaled(num, orig string, u unit) (float64, error) {
	if u.exp10 != 0 && !strings.ContainsAny(num, "eE") {
		num += "e" + strconv.Itoa(u.exp10)
	} else if u.exp10 != 0 {
		v, err := parseNumber(num, orig)
		return v * math.Pow10(u.exp10) / u.div, err
	}
	v, err := parseNumber(num, orig)
	return v / u.div, err
}

// ParseBandwidth parses "1Gbps", "125MBps", ... into bytes per second. The
// value must be positive.
func ParseBandwidth(s string) (float64, error) {
	num, suf := splitQuantity(s)
	if _, err := parseNumber(num, s); err != nil {
		return 0, err
	}
	if suf == "" {
		return 0, fmt.Errorf("%q: missing unit (%s)", s, bandwidthWant)
	}
	u, ok := lookupUnit(bandwidthUnits, suf)
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit (%s)", s, bandwidthWant)
	}
	v, err := scaled(num, s, u)
	if err != nil {
		return 0, err
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: bandwidth must be positive and finite", s)
	}
	return v, nil
}

// ParseTime parses "0.3us", "20ms", ... into seconds. The value must not be
// negative; a bare "0" is accepted since it needs no unit.
func ParseTime(s string) (float64, error) {
	num, suf := splitQuantity(s)
	v, err := parseNumber(num, s)
	if err != nil {
		return 0, err
	}
	if suf == "" {
		if v == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("%q: missing unit (%s)", s, timeWant)
	}
	u, ok := lookupUnit(timeUnits, suf)
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit (%s)", s, timeWant)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q: time must not be negative", s)
	}
	if v, err = scaled(num, s, u); err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: not a usable time", s)
	}
	return v, nil
}

// ParseSize parses "64KiB", "2MiB" or a plain byte count into bytes. The
// result must be a non-negative whole number of bytes.
func ParseSize(s string) (int64, error) {
	num, suf := splitQuantity(s)
	v, err := parseNumber(num, s)
	if err != nil {
		return 0, err
	}
	b := v
	if suf != "" {
		u, ok := lookupUnit(sizeUnits, suf)
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit (%s)", s, sizeWant)
		}
		b = v / u.div
	}
	if b < 0 {
		return 0, fmt.Errorf("%q: size must not be negative", s)
	}
	if b != math.Trunc(b) || b > 1<<62 {
		return 0, fmt.Errorf("%q: not a whole number of bytes", s)
	}
	return int64(b), nil
}

// scale is a unit of printing: its suffix and what one of it is worth.
type scale struct {
	f      float64
	suffix string
}

var (
	bitScales  = []scale{{1e9, "Gbps"}, {1e6, "Mbps"}, {1e3, "Kbps"}, {1, "bps"}}
	byteScales = []scale{{1e9, "GBps"}, {1e6, "MBps"}, {1e3, "KBps"}, {1, "Bps"}}
	timeScales = []scale{{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}}
)

// format prints v with 3 significant digits (what a measurement or a
// summary of them can claim, and enough for every value a platform file
// states) in the largest unit that keeps the number at least 1. v is
// rounded first, so that 999.96 us prints as 1ms, never as 1e+03us.
func format(v float64, scales []scale) string {
	last := scales[len(scales)-1]
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		for _, sc := range scales {
			if sc.f == 1 { // zero and the non-numbers in the base unit: "0s"
				return strconv.FormatFloat(v, 'g', 3, 64) + sc.suffix
			}
		}
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	for _, sc := range scales {
		if math.Abs(r) >= sc.f || sc == last {
			return strconv.FormatFloat(r/sc.f, 'g', 3, 64) + sc.suffix
		}
	}
	return ""
}

// FormatBandwidth prints bytes per second as bits per second, the unit
// network links are sold in: 1.25e8 -> "1Gbps".
func FormatBandwidth(bps float64) string { return format(bps*8, bitScales) }

// FormatByteRate prints bytes per second in byte units, the way memory
// bandwidth is quoted: 2e10 -> "20GBps".
func FormatByteRate(bps float64) string { return format(bps, byteScales) }

// FormatTime prints seconds: 1.1e-4 -> "110us".
func FormatTime(s float64) string { return format(s, timeScales) }

// FormatSize prints a byte count the way ParseSize reads it back: in KiB or
// MiB when it is a whole number of them (message sizes are powers of two),
// else in bytes: 65536 -> "64KiB", 1000 -> "1000B".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// FormatDecimalBytes prints a byte count in decimal units, for products of
// measurements such as a bandwidth-delay product, which are no buffer sizes:
// 1234567 -> "1.23MB", 1500 -> "1.5kB".
func FormatDecimalBytes(b int64) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.2fMB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1fkB", float64(b)/1e3)
	}
	return fmt.Sprintf("%dB", b)
}
