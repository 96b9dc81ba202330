package platform

import "netaware/units"

// The parsing and printing of quantities moved to package units (issue
// 14); these forward to it while parallel branches merge.

// Deprecated: use units.ParseBandwidth.
func ParseBandwidth(s string) (float64, error) { return units.ParseBandwidth(s) }

// Deprecated: use units.ParseTime.
func ParseTime(s string) (float64, error) { return units.ParseTime(s) }

// Deprecated: use units.ParseSize.
func ParseSize(s string) (int64, error) { return units.ParseSize(s) }

// Deprecated: use units.FormatBandwidth.
func FormatBandwidth(bps float64) string { return units.FormatBandwidth(bps) }

// Deprecated: use units.FormatTime.
func FormatTime(s float64) string { return units.FormatTime(s) }

// Deprecated: use units.FormatByteRate.
func FormatByteRate(bps float64) string { return units.FormatByteRate(bps) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
