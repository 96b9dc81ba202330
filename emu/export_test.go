package emu

// Save records c's state, for tests that fake a half-built cluster.
func (c *Cluster) Save() error { return c.save() }
