package emu

import "fmt"

// FindHost finds a host (a name or an address) among every cluster recorded
// in stateDir ("" for the default), for a remote shell that is given only a
// host: an error when no cluster or more than one has it.
func FindHost(stateDir, host string) (*Cluster, int, error) {
	clusters, err := recorded(stateDir)
	if err != nil {
		return nil, 0, err
	}
	var found *Cluster
	idx := -1
	for _, c := range clusters {
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

// recorded loads every cluster recorded in stateDir; a state file that
// cannot be read (one being written, say) is left out.
func recorded(stateDir string) ([]*Cluster, error) {
	prefixes, err := List(stateDir)
	if err != nil {
		return nil, err
	}
	var out []*Cluster
	for _, p := range prefixes {
		if c, err := Load(stateDir, p); err == nil {
			out = append(out, c)
		}
	}
	return out, nil
}
