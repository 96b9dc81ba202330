package platform

import "testing"

func TestBuiltinsLoad(t *testing.T) {
	bs := Builtins()
	if len(bs) != 8 {
		t.Errorf("%d built-ins, want 8", len(bs))
	}
	for _, b := range bs {
		p, err := Load(b.Name)
		if err != nil {
			t.Errorf("%s: %v", b.Name, err)
			continue
		}
		if b.Description == "" || p.Name != b.Name {
			t.Errorf("%s: name %q description %q", b.Name, p.Name, b.Description)
		}
		if n := p.Noise(); n.Seed != 1 || n.LatencyJitter <= 0 || n.BandwidthJitter <= 0 {
			t.Errorf("%s: noise %+v", b.Name, n)
		}
		ls := p.Truth()
		checkLevels(t, p, ls)
		t.Logf("%s: %d ranks, %d resources: %s", b.Name, p.NumRanks(), len(p.Resources()), levelSummary(ls))
	}
}

func TestLoadUnknown(t *testing.T) {
	if _, err := Load("no-such-platform"); err == nil {
		t.Error("unknown name accepted")
	}
}
