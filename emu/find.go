package emu

import "fmt"

// FindHost finds a host (a name or an address) among every cluster recorded
// in stateDir ("" for the default), for a remote shell that is given only a
// host: an error when no cluster or more than one has it.
func FindHost(stateDir, host string) (*Cluster, int, error) {
	prefixes, err := List(stateDir)
	if err != nil {
		return nil, 0, err
	}
	var found *Cluster
	idx := -1
	for _, p := range prefixes {
		c, err := Load(stateDir, p)
		if err != nil {
			continue
		}
		if i, err := c.HostIndex(host); err == nil {
			if found != nil {
				return nil, 0, fmt.Errorf("host %s is in clusters %s and %s: use its address", host, found.Prefix, c.Prefix)
			}
			found, idx = c, i
		}
	}
	if found == nil {
		return nil, 0, fmt.Errorf("no emulated cluster has a host %s (see 'netaware emu status')", host)
	}
	return found, idx, nil
}
