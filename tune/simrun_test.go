package tune

import (
	"context"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/sim"
	"netaware/platform"
)

// simRun runs the harness on every rank of a simulated platform and
// returns rank 0's measurements, as the CLI does for --platform.
func simRun(p *platform.Platform, o sim.Options, cfg BenchConfig, algs []coll.Algorithm) ([]Measurement, error) {
	var out []Measurement
	_, err := sim.Run(context.Background(), p, o, func(ctx context.Context, c comm.Comm) error {
		ms, err := Run(ctx, c, cfg, algs)
		if c.Rank() == 0 {
			out = ms
		}
		return err
	})
	return out, err
}
