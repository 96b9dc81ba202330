package report

import (
	"errors"
	"fmt"
	"io/fs"

	"path/filepath"

	"netaware/dataset"
	"netaware/model"
	"netaware/topo"
)

// LoadDir reads a discovery directory: DIR/topology.json (required),
// DIR/dataset.json, DIR/model.json and DIR/hierarchy.json (each
// optional). With discover's hierarchy.json the distance matrix and
// dendrogram are discover's (TreeDistance and the saved merges); without
// it they are left for Build to recompute from the dataset with
// DistanceFromDataset and HierarchyOf.
func LoadDir(dir string) (Input, error) {
	var in Input
	t, err := topo.ReadFile(filepath.Join(dir, "topology.json"))
	if err != nil {
		return in, fmt.Errorf("report: %w", err)
	}
	in.Topology = t
	dsPath := filepath.Join(dir, "dataset.json")
	switch ds, err := dataset.Load(dsPath); {
	case err == nil:
		if ds.World.Size != t.Size {
			return in, fmt.Errorf("report: %s has %d ranks, topology.json %d", dsPath, ds.World.Size, t.Size)
		}
		in.Dataset = ds
	case !errors.Is(err, fs.ErrNotExist):
		return in, fmt.Errorf("report: %w", err)
	}
	mPath := filepath.Join(dir, "model.json")
	switch m, err := model.ReadFile(mPath); {
	case err == nil:
		in.Model = m
	case !errors.Is(err, fs.ErrNotExist):
		return in, fmt.Errorf("report: %w", err)
	}
	h, dist, err := readHierarchy(filepath.Join(dir, HierarchyFileName), t.Size)
	if err != nil {
		return in, fmt.Errorf("report: %w", err)
	}
	if h != nil && dist == TreeDistanceName {
		// discover's own report: the same matrix and dendrogram.
		if in.Distance, err = TreeDistance(in.Dataset, t); err != nil {
			return in, fmt.Errorf("report: %w", err)
		}
		in.Hierarchy = h
	}
	if in.Dataset != nil {
		in.Title = WorldTitle(in.Dataset.World)
	}
	if in.Title == "" {
		in.Title = filepath.Base(filepath.Clean(dir))
	}
	return in, nil
}
