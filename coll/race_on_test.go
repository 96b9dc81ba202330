//go:build race

package coll

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, on purpose, so tests of buffer reuse cannot count on it.
const raceEnabled = true
