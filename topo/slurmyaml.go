package topo

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Names of the topologies WriteSlurmYAML defines; partitions choose one
// with Topology= in slurm.conf.
const (
	SlurmTreeTopology  = "netaware-tree"
	SlurmBlockTopology = "netaware-block"
)

// The documents of topology.yaml(5) (Slurm 24.11 and later), field for
// field; "topology" must come first, which the struct order gives.
type slurmYAMLTopology struct {
	Topology       string          `yaml:"topology"`
	ClusterDefault bool            `yaml:"cluster_default"`
	Tree           *slurmYAMLTree  `yaml:"tree,omitempty"`
	Block          *slurmYAMLBlock `yaml:"block,omitempty"`
}

type slurmYAMLTree struct {
	Switches []slurmYAMLSwitch `yaml:"switches"`
}

type slurmYAMLSwitch struct {
	Switch   string `yaml:"switch"`
	Children string `yaml:"children,omitempty"`
	Nodes    string `yaml:"nodes,omitempty"`
}

type slurmYAMLBlock struct {
	BlockSizes []int                 `yaml:"block_sizes"`
	Blocks     []slurmYAMLBlockEntry `yaml:"blocks"`
}

type slurmYAMLBlockEntry struct {
	Block string `yaml:"block"`
	Nodes string `yaml:"nodes"`
}

// SlurmBlock is one base block of Slurm's topology/block plugin.
type SlurmBlock struct {
	Name  string
	Nodes []string
}

// SlurmBlocks gives the block topology of t: the base blocks are the
// groups of the first level coarser than hosts (leaf switches; all hosts in
// one block when there is no such level), listed so that the blocks under
// one coarser group are adjacent, since Slurm aggregates neighbouring
// blocks in file order. The sizes are the planning base block size (the
// smallest block's node count, which every block must reach) and, level by
// level upwards, the node count of the coarser groups as long as every
// group of the level holds the same number of equal blocks and the size
// grows by a power of two, as Slurm requires; the first level that breaks
// this ends the list, because an enforced size that cuts across a level
// would pair blocks the network does not.
func (t *Topology) SlurmBlocks() (sizes []int, blocks []SlurmBlock, err error) {
	if err := t.Validate(); err != nil {
		return nil, nil, err
	}
	hostGroups, hosts, err := t.HostPartition()
	if err != nil {
		return nil, nil, fmt.Errorf("slurm block topology: %w", err)
	}
	root, chain, hostOf := hostNest(hostGroups, t.Levels, t.Size)
	// Without collapsing every layer is kept, so all hosts are at the same
	// depth and a node's height is its level: 1 = base blocks.
	height := map[*nest]int{}
	top := heights(root, height)
	if top == 0 {
		root = &nest{kids: []*nest{root}} // one host: one block
		top = heights(root, height)
	}
	var byHeight = make([][]*nest, top+1)
	var walk func(n *nest)
	walk = func(n *nest) {
		byHeight[height[n]] = append(byHeight[height[n]], n)
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	base := byHeight[1]
	if len(chain) == 0 {
		base = []*nest{root}
	}
	nodesIn := map[*nest]int{}
	for i, b := range base {
		blk := SlurmBlock{Name: "b" + strconv.Itoa(i)}
		for _, h := range b.kids {
			blk.Nodes = append(blk.Nodes, hosts[hostOf[h.allRanks()[0]]])
		}
		nodesIn[b] = len(blk.Nodes)
		blocks = append(blocks, blk)
	}
	bsize := len(blocks[0].Nodes)
	uniform := true
	for _, b := range blocks {
		bsize = min(bsize, len(b.Nodes))
		uniform = uniform && len(b.Nodes) == len(blocks[0].Nodes)
	}
	sizes = []int{bsize}
	if !uniform || len(chain) == 0 {
		return sizes, blocks, nil
	}
	var count func(n *nest) int // base blocks under n
	count = func(n *nest) int {
		if height[n] == 1 {
			return 1
		}
		c := 0
		for _, k := range n.kids {
			c += count(k)
		}
		return c
	}
	for h := 2; h <= top; h++ {
		m := count(byHeight[h][0])
		for _, n := range byHeight[h][1:] {
			if count(n) != m {
				return sizes, blocks, nil
			}
		}
		next, prev := bsize*m, sizes[len(sizes)-1]
		if next == prev {
			continue // a level that adds nothing (one group under another)
		}
		if next%prev != 0 || !powerOfTwo(next/prev) {
			return sizes, blocks, nil
		}
		sizes = append(sizes, next)
	}
	return sizes, blocks, nil
}

func powerOfTwo(x int) bool { return x > 0 && x&(x-1) == 0 }

// WriteSlurmYAML writes a topology.yaml for Slurm 24.11 and later
// (topology.yaml(5)): two topologies of the same cluster, the tree
// (SlurmSwitches; the cluster default) and the blocks (SlurmBlocks), which
// a partition selects with Topology=netaware-block. The format has no link
// speed (Slurm's parser skips it), so link speeds go only to topology.conf.
func (t *Topology) WriteSlurmYAML(w io.Writer) error {
	sws, err := t.SlurmSwitches()
	if err != nil {
		return err
	}
	sizes, blocks, err := t.SlurmBlocks()
	if err != nil {
		return err
	}
	tree := &slurmYAMLTree{}
	for _, s := range sws {
		ys := slurmYAMLSwitch{Switch: s.Name}
		if len(s.Nodes) > 0 {
			ys.Nodes = CompressHostlist(s.Nodes)
		} else {
			ys.Children = CompressHostlist(s.Switches)
		}
		tree.Switches = append(tree.Switches, ys)
	}
	block := &slurmYAMLBlock{BlockSizes: sizes}
	for _, b := range blocks {
		block.Blocks = append(block.Blocks, slurmYAMLBlockEntry{Block: b.Name, Nodes: CompressHostlist(b.Nodes)})
	}
	doc := []slurmYAMLTopology{
		{Topology: SlurmTreeTopology, ClusterDefault: true, Tree: tree},
		{Topology: SlurmBlockTopology, ClusterDefault: false, Block: block},
	}
	var b bytes.Buffer
	b.WriteString("# topology.yaml for Slurm 24.11 and later (topology.yaml(5)), written by netaware\n")
	if t.Method != nil && t.Method.Name != "" {
		fmt.Fprintf(&b, "# from a topology found by %s\n", t.Method.Name)
	}
	fmt.Fprintf(&b, "# %s: the switch tree (cluster default); %s: leaf switches as blocks\n", SlurmTreeTopology, SlurmBlockTopology)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("topology.yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("topology.yaml: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}
