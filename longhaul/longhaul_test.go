package longhaul

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"netaware/comm"
	"netaware/comm/local"
	"netaware/comm/sim"
	"netaware/platform"
)

// Seed 000 Fig. 3.2: the two-phase transfer delivers the message intact
// for every split, including empty pieces (size < pieces), asymmetric
// helper counts and helpers numbered below the endpoints.
func TestDichevFig32TransferDeliversMessage(t *testing.T) {
	plans := []Plan{
		{Src: 0, Dst: 1},
		{Src: 0, Dst: 3, SrcHelpers: []int{1}, DstHelpers: []int{2}},
		{Src: 4, Dst: 0, SrcHelpers: []int{5, 6}, DstHelpers: []int{1, 2, 3}},
		{Src: 2, Dst: 5, DstHelpers: []int{6, 0}},
		{Src: 1, Dst: 2, SrcHelpers: []int{0, 3, 4, 5, 6}},
	}
	for _, p := range plans {
		for _, size := range []int{0, 1, 5, 1000, 1<<20 + 7} {
			msg := make([]byte, size)
			for i := range msg {
				msg[i] = byte(i*7 + i>>8)
			}
			got := make([]byte, size)
			err := local.Run(context.Background(), 7, func(ctx context.Context, c comm.Comm) error {
				var buf []byte
				switch c.Rank() {
				case p.Src:
					buf = msg
				case p.Dst:
					buf = got
				}
				return Transfer(ctx, c, p, 3, buf, size)
			})
			if err != nil {
				t.Fatalf("%+v size %d: %v", p, size, err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("%+v size %d: message corrupted", p, size)
			}
		}
	}
}

func TestPlanValidate(t *testing.T) {
	for _, c := range []struct {
		p    Plan
		want string
	}{
		{Plan{Src: 0, Dst: 0}, "rank 0 is both sender and receiver"},
		{Plan{Src: 0, Dst: 9}, "receiver rank 9"},
		{Plan{Src: 0, Dst: 1, SrcHelpers: []int{2}, DstHelpers: []int{2}}, "rank 2 is both sender-side helper and receiver-side helper"},
		{Plan{Src: -1, Dst: 1}, "sender rank -1"},
	} {
		if err := c.p.Validate(4); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if got := (Plan{SrcHelpers: []int{1, 2}, DstHelpers: []int{3, 4}}).Pieces(); got != 5 {
		t.Errorf("2+2 helpers: %d pieces, want 5 (the seed's n-1 with n = 6)", got)
	}
}

// Eq. 3.1 and 3.2 by hand with the seed's t_c = 0.02 s, m_c = 128 KB:
// 1 MiB is 8 fragments; one stream pays 8 synchronisations, 5 pieces pay
// floor(8/5) = 1, 9 pieces none.
func TestDichevEq31Eq32ByHand(t *testing.T) {
	md := Model{Alpha: 0.001, Beta: 1e-8, Tc: 0.02, Mc: 131072}
	m := float64(1 << 20)
	base := 0.001 + 1e-8*m
	for _, c := range []struct {
		pieces int
		want   float64
	}{{1, base + 8*0.02}, {2, base + 4*0.02}, {5, base + 0.02}, {8, base + 0.02}, {9, base}} {
		if got := md.Time(m, c.pieces); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%d pieces: %v, want %v", c.pieces, got, c.want)
		}
	}
}

// Eq. 3.2 chooses the helper count: the seed's case, messages of at most
// 256 KB = 2 m_c, needs a single extra process per side (3 pieces, no
// synchronisation left); 1 MiB needs 4 per side (9 pieces > 8 fragments);
// with at most 2 allowed, 2 is best; a message under m_c needs none.
func TestDichevEq32HelperCount(t *testing.T) {
	md := Model{Alpha: 0.001, Beta: 1e-8, Tc: 0.02, Mc: 131072}
	for _, c := range []struct {
		m        float64
		max, got int
	}{{262144, 5, 1}, {1 << 20, 5, 4}, {1 << 20, 2, 2}, {100000, 5, 0}} {
		if h := md.ChooseHelpers(c.m, c.max, 0.05); h != c.got {
			t.Errorf("M=%v max %d: %d helpers, want %d", c.m, c.max, h, c.got)
		}
	}
}

// Fit recovers beta and m_c exactly from samples made by the model with
// M a multiple of every pieces*m_c (the floor is then exact), and refuses
// samples with a single piece count.
func TestFitRecoversEq32(t *testing.T) {
	want := Model{Alpha: 0.002, Beta: 8e-9, Tc: 0.018, Mc: 131072}
	m := float64(131072 * 3 * 5 * 7 * 64)
	var s []Sample
	for _, p := range []int{1, 3, 5, 7} {
		s = append(s, Sample{Bytes: m, Pieces: p, Seconds: want.Time(m, p)})
	}
	got, err := Fit(want.Alpha, want.Tc, s)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Beta-want.Beta) > 1e-15 || math.Abs(got.Mc-want.Mc) > 1e-3 {
		t.Errorf("fit %+v, want %+v", got, want)
	}
	if _, err := Fit(0.002, 0.018, s[:1]); err == nil {
		t.Error("one piece count accepted")
	}
	if _, err := Fit(0.002, 0.018, []Sample{{m, 1, 1}, {m, 3, 1}}); err == nil {
		t.Error("no gain from pieces: m_c accepted")
	}
}

// twoSites: 3 hosts per site, 1 Gbps host links, 5 ms between the sites,
// a 128 KiB TCP window, no noise.
const twoSites = `version: 1
name: two-sites
switches: [sa, sb]
links:
  - {between: [sa, sb], bandwidth: 10Gbps, latency: 5ms}
hosts:
  - {names: "a[1-3]", switch: sa, link: {bandwidth: 1Gbps, latency: 25us}}
  - {names: "b[1-3]", switch: sb, link: {bandwidth: 1Gbps, latency: 25us}}
tcp: {window_bytes: 128KiB}
`

// simTransfer runs one transfer of size bytes on twoSites with h helpers
// per side and returns its virtual time.
func simTransfer(t *testing.T, size, h int) time.Duration {
	t.Helper()
	p, err := platform.Parse("two-sites.yaml", []byte(twoSites))
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan{Src: 0, Dst: 3}
	for i := 1; i <= h; i++ {
		plan.SrcHelpers = append(plan.SrcHelpers, i)
		plan.DstHelpers = append(plan.DstHelpers, 3+i)
	}
	var took time.Duration
	msg := make([]byte, size)
	_, err = sim.Run(context.Background(), p, sim.Options{NoNoise: true}, func(ctx context.Context, c comm.Comm) error {
		buf := msg
		if c.Rank() == plan.Dst {
			buf = make([]byte, size)
		}
		t0 := c.Now()
		if err := Transfer(ctx, c, plan, 0, buf, size); err != nil {
			return err
		}
		if c.Rank() == plan.Dst {
			took = c.Now() - t0
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return took
}

// Window-bound streams: one stream of 8 MiB moves 128 KiB per 10.1 ms
// round trip (13 MB/s, 0.64 s). n pieces cannot beat n times that (each
// piece is its own window-bound stream), and the local hop of the helpers'
// pieces (at most a third of 1 Gbps while the sender's NIC also feeds the
// long streams) keeps them above 70% of it; more helpers are faster.
func TestDichevSect322PiecesBeatTheWindow(t *testing.T) {
	size := 8 << 20
	one := simTransfer(t, size, 0)
	rtt := 2 * (5e-3 + 2*25e-6)
	if want := float64(size) / (131072 / rtt); math.Abs(one.Seconds()-want) > 0.1*want {
		t.Errorf("one stream: %v, want about %.3fs", one, want)
	}
	prev := one
	for h := 1; h <= 2; h++ {
		got := simTransfer(t, size, h)
		speedup := one.Seconds() / got.Seconds()
		pieces := float64(SymmetricPieces(h))
		t.Logf("h=%d: %v, speed-up %.2f", h, got, speedup)
		if speedup < 0.7*pieces || speedup > pieces {
			t.Errorf("h=%d: speed-up %.2f, want between %.1f and %v", h, speedup, 0.7*pieces, pieces)
		}
		if got >= prev {
			t.Errorf("h=%d: %v, not faster than %v", h, got, prev)
		}
		prev = got
	}
}

func ExampleModel_ChooseHelpers() {
	md := Model{Alpha: 0.001, Beta: 1e-8, Tc: 0.02, Mc: 128 << 10}
	for _, m := range []float64{64 << 10, 256 << 10, 1 << 20} {
		h := md.ChooseHelpers(m, 5, 0.05)
		fmt.Printf("%7.0f bytes: %d helpers per side, %.3f s instead of %.3f s\n", m, h, md.Time(m, SymmetricPieces(h)), md.Time(m, 1))
	}
	// Output:
	//   65536 bytes: 0 helpers per side, 0.002 s instead of 0.002 s
	//  262144 bytes: 1 helpers per side, 0.004 s instead of 0.044 s
	// 1048576 bytes: 4 helpers per side, 0.011 s instead of 0.171 s
}
