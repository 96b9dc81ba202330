package live

import (
	"netaware/infer"
	"netaware/intern"
)

// finalTrees holds the final tree once per process: it is the same on
// every rank, and ranks of one process (simulator, local world) then share
// one read-only copy instead of holding one each (O(N^2) memory). Tree's
// queries do not write to it.
var finalTrees intern.Table[infer.Tree]

// decodeShared returns the tree encoded in enc, the process's copy if one
// is alive.
func decodeShared(enc []byte) (*infer.Tree, error) {
	return finalTrees.Get(enc, infer.UnmarshalTree)
}

// sharedTree registers t, encoded as enc, as the process's copy of that
// tree, or returns the live copy.
func sharedTree(enc []byte, t *infer.Tree) *infer.Tree { return finalTrees.Put(enc, t) }
