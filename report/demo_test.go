package report

import (
	"os"
	"testing"
)

// TestDemo writes a demo report to $REPORT_DEMO_DIR for looking at; it is
// skipped when the variable is unset.
func TestDemo(t *testing.T) {
	dir := os.Getenv("REPORT_DEMO_DIR")
	if dir == "" {
		t.Skip("REPORT_DEMO_DIR not set")
	}
	f := fixture{sites: 2, switches: 2, ranksPer: 8, noise: 0.05, seed: 1}
	if os.Getenv("REPORT_DEMO_BIG") != "" {
		f = fixture{sites: 4, switches: 16, ranksPer: 64, noise: 0.05, seed: 1}
	}
	paths, out, err := WriteDir(dir, f.input())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(paths, out.Notes)
}
