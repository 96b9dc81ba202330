package units

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestParseBandwidth(t *testing.T) {
	cases := map[string]float64{
		"100Mbps": 12.5e6, "1Gbps": 125e6, "10Gbps": 1.25e9, "125MBps": 125e6,
		"20GBps": 20e9, "8bps": 1, "1Bps": 1, "8Kbps": 1000, "1KBps": 1000, "1.5 Gbps": 187.5e6,
	}
	for in, want := range cases {
		got, err := ParseBandwidth(in)
		if err != nil || !near(got, want) {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"10Gbs", "10", "", "Gbps", "-1Gbps", "0Gbps", "1gbps", "NaNGbps", "infGbps", "1e400Gbps"} {
		if _, err := ParseBandwidth(bad); err == nil {
			t.Errorf("ParseBandwidth(%q) accepted", bad)
		}
	}
}

func TestParseTimeAndSize(t *testing.T) {
	times := map[string]float64{"0.3us": 0.3e-6, "5us": 5e-6, "1ms": 1e-3, "20ms": 20e-3, "1s": 1, "0ns": 0, "0": 0, "450ns": 450e-9}
	for in, want := range times {
		got, err := ParseTime(in)
		if err != nil || !near(got, want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"5", "5 sec", "-1us", "us", "1h"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
	sizes := map[string]int64{"64KiB": 65536, "2MiB": 2 << 20, "1000000": 1000000, "1GiB": 1 << 30, "3B": 3, "0": 0}
	for in, want := range sizes {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"1.5", "64KB", "-1", "2MB", "x"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

// Decimal unit prefixes are applied exactly: "100us" is the double nearest
// to 1e-4, as a Go literal would be.
func TestUnitsExactlyRounded(t *testing.T) {
	for in, want := range map[string]float64{"100us": 100e-6, "0.3us": 0.3e-6, "20ms": 20e-3, "0.225us": 0.225e-6, "2.5us": 2.5e-6} {
		if got, _ := ParseTime(in); got != want {
			t.Errorf("ParseTime(%q) = %v, want exactly %v", in, got, want)
		}
	}
	for in, want := range map[string]float64{"100Mbps": 100e6 / 8, "2.5Gbps": 2.5e9 / 8, "40GBps": 40e9} {
		if got, _ := ParseBandwidth(in); got != want {
			t.Errorf("ParseBandwidth(%q) = %v, want exactly %v", in, got, want)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	for _, s := range []string{"100Mbps", "1Gbps", "2.5Gbps", "8Kbps"} {
		v, _ := ParseBandwidth(s)
		if got := FormatBandwidth(v); got != s {
			t.Errorf("FormatBandwidth(ParseBandwidth(%q)) = %q", s, got)
		}
	}
	for _, s := range []string{"40GBps", "125MBps"} {
		v, _ := ParseBandwidth(s)
		if got := FormatByteRate(v); got != s {
			t.Errorf("FormatByteRate(ParseBandwidth(%q)) = %q", s, got)
		}
	}
	for _, s := range []string{"2.5us", "20ms", "1s", "450ns", "0s"} {
		v, _ := ParseTime(s)
		if got := FormatTime(v); got != s {
			t.Errorf("FormatTime(ParseTime(%q)) = %q", s, got)
		}
	}
}

// Measured values print with 3 significant digits in every table.
func TestFormatThreeDigits(t *testing.T) {
	for in, want := range map[float64]string{1.5625e9 / 8: "1.56Gbps", 225.4e-6: "225us", 99.94e-6: "99.9us", 0.4567e-6: "457ns",
		999.96e-6: "1ms", -2.719e-6: "-2.72us", 1.23e-6: "1.23us", 0.1e-9: "0.1ns"} {
		var got string
		if want[len(want)-1] == 's' && want[len(want)-2] != 'p' {
			got = FormatTime(in)
		} else {
			got = FormatBandwidth(in)
		}
		if got != want {
			t.Errorf("format(%g) = %q, want %q", in, got, want)
		}
	}
}

// Sizes print in the unit that keeps them whole and read back exactly.
func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1: "1B", 1000: "1000B", 1024: "1KiB", 1536: "1536B",
		65536: "64KiB", 1 << 20: "1MiB", 3 << 20: "3MiB", (1 << 20) + 1024: "1025KiB", 16 << 30: "16384MiB"} {
		got := FormatSize(n)
		if got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(got); err != nil || back != n {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, got, back, err)
		}
	}
	for b, want := range map[int64]string{0: "0B", 999: "999B", 1000: "1.0kB", 1500: "1.5kB", 999999: "1000.0kB", 1e6: "1.00MB", 1234567: "1.23MB"} {
		if got := FormatDecimalBytes(b); got != want {
			t.Errorf("FormatDecimalBytes(%d) = %q, want %q", b, got, want)
		}
	}
}
