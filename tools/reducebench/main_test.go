package main

import (
	"context"
	"testing"

	"netaware/coll"
	"netaware/comm"
	"netaware/comm/local"
)

// TestRunChecksAndReports: the benchmark body reduces on five ranks of a
// local world (its result check passes only if the sum is right) for
// both a whole-message and a segmented tree.
func TestRunChecksAndReports(t *testing.T) {
	for _, alg := range []coll.Algorithm{{Name: "binomial"}, {Name: "binomial", SegSize: 4096}} {
		err := local.Run(context.Background(), 5, func(ctx context.Context, c comm.Comm) error {
			return run(ctx, c, alg, 64<<10, 1, 3)
		})
		if err != nil {
			t.Fatalf("%v: %v", alg, err)
		}
	}
	err := local.Run(context.Background(), 2, func(ctx context.Context, c comm.Comm) error {
		return run(ctx, c, coll.Algorithm{Name: "no-such-tree"}, 64, 0, 1)
	})
	if err == nil {
		t.Fatal("unknown algorithm accepted")
	}
}
