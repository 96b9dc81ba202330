// Package order gives the rank order that makes rank-order collective
// algorithms follow an inferred topology, in the files launchers read.
//
// MPI libraries and NCCL build their rings, chains and pipelines in rank
// order: rank i sends to rank i+1. Under a cyclic placement on two switches
// every such hop crosses the trunk. Listing the hosts in depth-first order
// of the inferred tree (seed 002 Sect. 6.2 orders its pipeline so) makes
// consecutive ranks neighbours in the tree, so a ring crosses each switch's
// uplink once in each direction, whatever library builds it.
package order

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"netaware/coll"
	"netaware/topo"
)

// Host is one host of a placement and the ranks of the measured topology
// it runs, in the order of the new ranks they become.
type Host struct {
	Name  string `json:"host"`
	Ranks []int  `json:"ranks"`
}

// Placement is a rank order: the hosts in launch order, each with the
// ranks it holds. New rank k is the k-th rank when reading the hosts in
// order; its slot is its index on its host.
type Placement struct {
	Hosts []Host `json:"hosts"`
}

// DepthFirst is the placement that visits the ranks in depth-first order
// of t's tree from rank 0 (coll.DFSOrder, the order of the dfs-pipeline
// broadcast; by levels when t has no tree). Ranks are then grouped by host,
// hosts in the order the traversal first reaches them, so that every host
// holds consecutive ranks (launchers place a host's slots together); when
// the tree keeps a host's ranks together, as inference does, this is the
// traversal itself. Every rank needs a host name.
func DepthFirst(t *topo.Topology) (*Placement, error) {
	if t == nil {
		return nil, fmt.Errorf("order: no topology")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("order: %w", err)
	}
	if _, _, err := t.HostPartition(); err != nil {
		return nil, fmt.Errorf("order: %w", err)
	}
	for _, r := range t.Ranks {
		if strings.ContainsAny(r.Host, " \t\r\n#:=,") {
			return nil, fmt.Errorf("order: rank %d: host name %q cannot be written in a hostfile", r.Rank, r.Host)
		}
	}
	dfs, err := coll.DFSOrder(t, t.Size, 0)
	if err != nil {
		return nil, fmt.Errorf("order: %w", err)
	}
	p := &Placement{}
	index := map[string]int{}
	for _, r := range dfs {
		h := t.Ranks[r].Host
		i, ok := index[h]
		if !ok {
			i = len(p.Hosts)
			index[h] = i
			p.Hosts = append(p.Hosts, Host{Name: h})
		}
		p.Hosts[i].Ranks = append(p.Hosts[i].Ranks, r)
	}
	return p, nil
}

// Order returns the measured rank that each new rank stands for.
func (p *Placement) Order() []int {
	var out []int
	for _, h := range p.Hosts {
		out = append(out, h.Ranks...)
	}
	return out
}

// Formats lists the files a placement is written as, by the names the CLI
// and Write take.
var Formats = []string{"ompi-hostfile", "ompi-rankfile", "machinefile", "slurm-hostfile", "hosts"}

// Write writes p in the named format (one of Formats).
func (p *Placement) Write(w io.Writer, format string) error {
	var b bytes.Buffer
	switch format {
	case "ompi-hostfile":
		// mpirun's default mapping (by slot) fills each host's slots before
		// the next host, in file order.
		for _, h := range p.Hosts {
			fmt.Fprintf(&b, "%s slots=%d\n", h.Name, len(h.Ranks))
		}
	case "ompi-rankfile":
		// "slot=N" is the N-th core of the host; a rank's core seen during
		// discovery is only where it last ran, so slots count from 0.
		k := 0
		for _, h := range p.Hosts {
			for i := range h.Ranks {
				fmt.Fprintf(&b, "rank %d=%s slot=%d\n", k, h.Name, i)
				k++
			}
		}
	case "machinefile":
		// Hydra (mpiexec of MPICH) reads "host:count" and fills each line's
		// processes before the next line.
		for _, h := range p.Hosts {
			fmt.Fprintf(&b, "%s:%d\n", h.Name, len(h.Ranks))
		}
	case "slurm-hostfile":
		// srun --distribution=arbitrary runs task k on line k.
		for _, h := range p.Hosts {
			for range h.Ranks {
				b.WriteString(h.Name + "\n")
			}
		}
	case "hosts":
		// Launchers that start one process per GPU per node (torchrun,
		// NCCL tests under a node list) number nodes in list order.
		for _, h := range p.Hosts {
			b.WriteString(h.Name + "\n")
		}
	default:
		return fmt.Errorf("order: unknown format %q (want %s)", format, strings.Join(Formats, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// FileName is the name 'netaware order --out-dir' gives a format's file.
// The one-host-a-rank file is plain "order.hostfile" because discover
// writes it: besides SLURM_HOSTFILE, Open MPI's --hostfile (a host listed
// k times has k slots) and Hydra's -f (a line without a count is one
// process) read it to the same placement.
func FileName(format string) string {
	switch format {
	case "ompi-hostfile":
		return "order.ompi-hostfile"
	case "ompi-rankfile":
		return "order.rankfile"
	case "machinefile":
		return "order.machinefile"
	case "slurm-hostfile":
		return "order.hostfile"
	case "hosts":
		return "order.hosts"
	}
	return "order." + format
}

// Slot is where one new rank runs.
type Slot struct {
	Rank     int    `json:"rank"`     // the new rank
	Host     string `json:"host"`     // its host
	Slot     int    `json:"slot"`     // its index on the host
	Measured int    `json:"measured"` // the rank of the measured topology it stands for
}

// Slots lists every new rank with its host, slot and measured rank.
func (p *Placement) Slots() []Slot {
	var out []Slot
	for _, h := range p.Hosts {
		for i, r := range h.Ranks {
			out = append(out, Slot{Rank: len(out), Host: h.Name, Slot: i, Measured: r})
		}
	}
	return out
}
