// Package emutest builds emulated clusters for tests of other packages:
// Cluster skips the test where emu cannot run (not root, no ip/tc), builds
// the cluster, and removes it when the test ends, also when it fails.
package emutest

import (
	"context"
	"errors"
	"testing"
	"time"

	"netaware/emu"
	"netaware/platform"
)

// BuildTimeout bounds building (and removing) a test cluster.
const BuildTimeout = time.Minute

// Cluster builds plat's network under prefix (one of the test's own
// prefixes: whatever exists under it is removed first) and registers its
// removal with t.Cleanup. It skips the test, saying why, when this process
// is not root, lacks ip, tc, unshare or nsenter, may not create namespaces,
// or runs on a kernel without tbf.
func Cluster(t testing.TB, plat *platform.Platform, prefix string) *emu.Cluster {
	t.Helper()
	return ClusterWith(t, plat, emu.Options{Prefix: prefix})
}

// ClusterWith is Cluster with options (placement, burst).
func ClusterWith(t testing.TB, plat *platform.Platform, opt emu.Options) *emu.Cluster {
	t.Helper()
	if err := emu.Check(); err != nil {
		t.Skipf("emulated cluster unavailable: %v", err)
	}
	down := func() {
		ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
		defer cancel()
		if err := emu.Down(ctx, opt.StateDir, opt.Prefix); err != nil {
			t.Errorf("removing emulated cluster %s: %v", opt.Prefix, err)
		}
	}
	down() // a crashed earlier run may have left this prefix behind
	t.Cleanup(down)
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	c, err := emu.Up(ctx, plat, opt, nil)
	if errors.Is(err, emu.ErrUnsupported) {
		t.Skipf("emulated cluster unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("building emulated cluster %s of %s: %v", opt.Prefix, plat.Name, err)
	}
	return c
}
