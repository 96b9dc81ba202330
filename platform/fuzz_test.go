package platform

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that whatever parses
// also answers every query without panicking.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/*.yaml", "builtin/*.yaml"} {
		files, _ := filepath.Glob(dir)
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("version: 1\nswitches: [s]\nhosts: [{names: \"h[1-2]\", switch: s, link: {bandwidth: 1Gbps, latency: 1us}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		n := p.NumRanks()
		if n > 64 {
			n = 64
		}
		for a := range n {
			for b := range n {
				if a != b {
					p.Route(a, b)
				}
			}
			p.Overhead(a)
			p.RankIdentity(a)
		}
		p.Truth()
	})
}
