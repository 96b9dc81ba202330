package coll

import (
	"context"
	"fmt"

	"netaware/comm"
	"netaware/swarm"
)

// Swarm is the swarm broadcast of seed 000 Sect. 4.2 (package swarm):
// receiver-initiated and adaptive, with no fixed schedule. Its SegSize is
// the fragment size and K the upload slots (0: 16 KiB and 5). Bcast runs
// it; it has no Schedule, so tuners and schedule tools leave it out.
var Swarm = Algorithm{Name: "swarm"}

// SwarmBcast broadcasts root's buf to every rank of c by a swarm: the
// peers request the fragments they lack from whichever peers have them,
// so data flows over the fast paths of a network nobody described (seed
// 000 Sect. 4.2.5: it beats tree broadcasts where a bottleneck link
// slows them). Every rank passes the same root, parameters and length.
func SwarmBcast(ctx context.Context, c comm.Comm, root int, buf []byte, p swarm.Params) error {
	if _, err := swarm.Broadcast(ctx, c, root, buf, p); err != nil {
		return fmt.Errorf("coll swarm bcast: %w", err)
	}
	return nil
}

func swarmParams(a Algorithm) swarm.Params {
	return swarm.Params{Fragment: a.SegSize, Connections: a.K, Seed: 1}
}
