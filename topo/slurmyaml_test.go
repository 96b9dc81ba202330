package topo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// checkSlurmYAML checks a topology.yaml against the schema of Slurm's
// topology.yaml(5) (Slurm 25.05 man page; the format came with 24.11):
//
//   - the file is a list of topologies;
//   - a topology has "topology" (its unique name, the first attribute),
//     optional "cluster_default" (boolean), and exactly one of "block",
//     "flat" (boolean true) and "tree";
//   - a tree has "switches", a list of switches with "switch" (a unique
//     name, required, at most 64 characters) and either "children" (child
//     switches) or "nodes" (the nodes of a leaf switch), both hostlists;
//   - a block has "block_sizes", a list of sizes each a power of two times
//     the one before, and "blocks", a list with "block" (unique name,
//     required) and "nodes" (hostlist); every block has at least the base
//     block size (the first size) of nodes.
//
// Nothing else is allowed: Slurm's parser (data_parser, TOPOLOGY_CONF)
// knows no other key, and skips link_speed. Children must name switches of
// the same tree. The error names the topology, entry and key at fault.
func checkSlurmYAML(doc []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return fmt.Errorf("not YAML: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.SequenceNode {
		return fmt.Errorf("line 1: the file must be a list of topologies")
	}
	names := map[string]bool{}
	for ti, tn := range root.Content[0].Content {
		where := fmt.Sprintf("line %d: topology %d", tn.Line, ti)
		m, keys, err := mapping(tn, where, "topology", "cluster_default", "block", "flat", "tree")
		if err != nil {
			return err
		}
		if len(keys) == 0 || keys[0] != "topology" {
			return fmt.Errorf("%s: \"topology\" must be the first attribute", where)
		}
		name, err := str(m["topology"], where+": topology")
		if err != nil {
			return err
		}
		if names[name] {
			return fmt.Errorf("%s: name %q used twice", where, name)
		}
		names[name] = true
		where = fmt.Sprintf("line %d: topology %q", tn.Line, name)
		if n, ok := m["cluster_default"]; ok && n.Tag != "!!bool" {
			return fmt.Errorf("%s: cluster_default %q: want true or false", where, n.Value)
		}
		kinds := 0
		for _, k := range []string{"block", "flat", "tree"} {
			if _, ok := m[k]; ok {
				kinds++
			}
		}
		if kinds != 1 {
			return fmt.Errorf("%s: want exactly one of block, flat and tree, found %d", where, kinds)
		}
		switch {
		case m["flat"] != nil:
			if n := m["flat"]; n.Tag != "!!bool" || n.Value != "true" && n.Value != "True" {
				return fmt.Errorf("%s: flat %q: want true", where, n.Value)
			}
		case m["tree"] != nil:
			if err := checkYAMLTree(m["tree"], where+": tree"); err != nil {
				return err
			}
		case m["block"] != nil:
			if err := checkYAMLBlock(m["block"], where+": block"); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkYAMLTree(n *yaml.Node, where string) error {
	m, _, err := mapping(n, where, "switches")
	if err != nil {
		return err
	}
	sws, err := list(m["switches"], where+": switches")
	if err != nil {
		return err
	}
	defined := map[string]bool{}
	var children [][2]string
	for i, sn := range sws {
		w := fmt.Sprintf("%s: line %d: switch %d", where, sn.Line, i)
		sm, _, err := mapping(sn, w, "switch", "children", "nodes")
		if err != nil {
			return err
		}
		name, err := str(sm["switch"], w+": switch")
		if err != nil {
			return err
		}
		if len(name) > 64 {
			return fmt.Errorf("%s: switch name %q longer than 64 characters", w, name)
		}
		if defined[name] {
			return fmt.Errorf("%s: switch %q defined twice", w, name)
		}
		defined[name] = true
		if (sm["children"] == nil) == (sm["nodes"] == nil) {
			return fmt.Errorf("%s: switch %q: want either children or nodes", w, name)
		}
		for _, k := range []string{"children", "nodes"} {
			if sm[k] == nil {
				continue
			}
			v, err := str(sm[k], w+": "+k)
			if err != nil {
				return err
			}
			hs, err := ExpandHostlist(v)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", w, k, err)
			}
			if k == "children" {
				for _, c := range hs {
					children = append(children, [2]string{name, c})
				}
			}
		}
	}
	for _, pc := range children {
		if !defined[pc[1]] {
			return fmt.Errorf("%s: switch %q: child %q is no switch of this tree", where, pc[0], pc[1])
		}
	}
	return nil
}

func checkYAMLBlock(n *yaml.Node, where string) error {
	m, _, err := mapping(n, where, "block_sizes", "blocks")
	if err != nil {
		return err
	}
	base := 0
	if sn, ok := m["block_sizes"]; ok {
		sizes, err := list(sn, where+": block_sizes")
		if err != nil {
			return err
		}
		prev := 0
		for i, s := range sizes {
			var v int
			if s.Tag != "!!int" || s.Decode(&v) != nil || v <= 0 {
				return fmt.Errorf("%s: block_sizes[%d] %q: want a positive integer", where, i, s.Value)
			}
			if prev > 0 && (v <= prev || v%prev != 0 || !powerOfTwo(v/prev)) {
				return fmt.Errorf("%s: block_sizes[%d] = %d: want a power of two times %d", where, i, v, prev)
			}
			prev = v
			if i == 0 {
				base = v
			}
		}
	}
	blocks, err := list(m["blocks"], where+": blocks")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, bn := range blocks {
		w := fmt.Sprintf("%s: line %d: block %d", where, bn.Line, i)
		bm, _, err := mapping(bn, w, "block", "nodes")
		if err != nil {
			return err
		}
		name, err := str(bm["block"], w+": block")
		if err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("%s: block %q defined twice", w, name)
		}
		seen[name] = true
		v, err := str(bm["nodes"], w+": nodes")
		if err != nil {
			return err
		}
		hs, err := ExpandHostlist(v)
		if err != nil {
			return fmt.Errorf("%s: nodes: %w", w, err)
		}
		if len(hs) < base {
			return fmt.Errorf("%s: block %q has %d nodes, fewer than the base block size %d", w, name, len(hs), base)
		}
	}
	return nil
}

// mapping checks that n is a mapping whose keys are among allowed, and
// returns it by key and the keys in order.
func mapping(n *yaml.Node, where string, allowed ...string) (map[string]*yaml.Node, []string, error) {
	if n == nil {
		return nil, nil, fmt.Errorf("%s: missing", where)
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: line %d: want a mapping", where, n.Line)
	}
	m := map[string]*yaml.Node{}
	var keys []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if !slices.Contains(allowed, k) {
			return nil, nil, fmt.Errorf("%s: line %d: unknown key %q (allowed: %s)", where, n.Content[i].Line, k, strings.Join(allowed, ", "))
		}
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("%s: line %d: key %q twice", where, n.Content[i].Line, k)
		}
		m[k] = n.Content[i+1]
		keys = append(keys, k)
	}
	return m, keys, nil
}

func list(n *yaml.Node, where string) ([]*yaml.Node, error) {
	if n == nil {
		return nil, fmt.Errorf("%s: missing", where)
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: line %d: want a list", where, n.Line)
	}
	return n.Content, nil
}

func str(n *yaml.Node, where string) (string, error) {
	if n == nil {
		return "", fmt.Errorf("%s: missing", where)
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || n.Value == "" {
		return "", fmt.Errorf("%s: line %d: %q: want a non-empty string", where, n.Line, n.Value)
	}
	return n.Value, nil
}

// A hand-written file in the documented shape passes, and each way of
// breaking the schema is caught, naming what is wrong: the checker can fail.
func TestSlurmYAMLCheckerByHand(t *testing.T) {
	good := `- topology: t1
  cluster_default: true
  tree:
    switches:
    - switch: top
      children: leaf[1-2]
    - switch: leaf1
      nodes: n[01-04]
    - switch: leaf2
      nodes: n[05-08]
- topology: t2
  block:
    block_sizes: [4, 8]
    blocks:
    - block: b1
      nodes: n[01-04]
    - block: b2
      nodes: n[05-08]
- topology: t3
  cluster_default: false
  flat: true
`
	if err := checkSlurmYAML([]byte(good)); err != nil {
		t.Fatalf("documented shape rejected: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"- topology: t1\n  cluster_default: true\n", "- cluster_default: true\n  topology: t1\n", "first attribute"},
		{"topology: t2", "topology: t1", "used twice"},
		{"cluster_default: true", "cluster_default: yes please", "cluster_default"},
		{"  flat: true\n", "  flat: true\n  tree: {switches: []}\n", "exactly one"},
		{"  flat: true\n", "", "exactly one"},
		{"      nodes: n[01-04]\n    - switch: leaf2", "      nodes: n[01-04]\n      link_speed: 100\n    - switch: leaf2", `unknown key "link_speed"`},
		{"children: leaf[1-2]", "children: leaf[1-3]", `child "leaf3"`},
		{"children: leaf[1-2]", "children: leaf[1-2]\n      nodes: n9", "either children or nodes"},
		{"    - switch: top\n      children: leaf[1-2]\n", "    - switch: top\n", "either children or nodes"},
		{"    - switch: leaf2\n      nodes: n[05-08]\n", "    - switch: leaf1\n      nodes: n[05-08]\n", "defined twice"},
		{"switch: top", "switch: " + strings.Repeat("x", 65), "longer than 64"},
		{"block_sizes: [4, 8]", "block_sizes: [4, 12]", "power of two times 4"},
		{"block_sizes: [4, 8]", "block_sizes: [4, 4]", "power of two times 4"},
		{"block_sizes: [4, 8]", "block_sizes: [5, 10]", "fewer than the base block size 5"},
		{"block_sizes: [4, 8]", "block_sizes: [four]", "positive integer"},
		{"    - block: b2\n", "    - block: b1\n", "defined twice"},
		{"      nodes: n[05-08]\n- topology: t3", "      nodes: n[05-\n- topology: t3", "nodes"},
		{"      nodes: n[01-04]\n    - switch: leaf2", "      nodes: 42\n    - switch: leaf2", "want a non-empty string"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("mutation %q did not apply", c.from)
		}
		err := checkSlurmYAML([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: %v, want an error about %q", c.from, c.to, err, c.want)
		}
	}
	if err := checkSlurmYAML([]byte("topology: t1\n")); err == nil {
		t.Error("a mapping at the top accepted")
	}
}

// slurmYAMLDoc is the decoded form the tests compare.
func slurmYAMLDoc(t *testing.T, tp *Topology) []slurmYAMLTopology {
	t.Helper()
	var b bytes.Buffer
	if err := tp.WriteSlurmYAML(&b); err != nil {
		t.Fatal(err)
	}
	if err := checkSlurmYAML(b.Bytes()); err != nil {
		t.Fatalf("schema: %v\n%s", err, b.String())
	}
	var doc []slurmYAMLTopology
	if err := yaml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// The TOPOLOGY.md example by hand: the tree of topology.conf, and two
// blocks of two nodes that pair into one of four.
func TestSlurmYAMLExampleByHand(t *testing.T) {
	var b bytes.Buffer
	if err := loadExample(t).WriteSlurmYAML(&b); err != nil {
		t.Fatal(err)
	}
	want := `- topology: netaware-tree
  cluster_default: true
  tree:
    switches:
      - switch: s0
        nodes: a[00-01]
      - switch: s1
        nodes: b[00-01]
      - switch: s2
        children: s[0-1]
- topology: netaware-block
  cluster_default: false
  block:
    block_sizes:
      - 2
      - 4
    blocks:
      - block: b0
        nodes: a[00-01]
      - block: b1
        nodes: b[00-01]
`
	if got := stripComments(b.String()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if err := checkSlurmYAML(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// Three levels (2 sites x 2 switches x 3 hosts): the tree equals
// topology.conf's, the base blocks are the four switches in site order,
// and the sizes are 3, 6 (a site), 12 (all).
func TestSlurmYAMLThreeLevels(t *testing.T) {
	tp := threeLevel(t)
	doc := slurmYAMLDoc(t, tp)
	sws, err := tp.SlurmSwitches()
	if err != nil {
		t.Fatal(err)
	}
	tree := doc[0].Tree.Switches
	if len(tree) != len(sws) {
		t.Fatalf("%d switches in topology.yaml, %d in topology.conf", len(tree), len(sws))
	}
	for i, s := range sws {
		if tree[i].Switch != s.Name || tree[i].Nodes != CompressHostlist(s.Nodes) || tree[i].Children != CompressHostlist(s.Switches) {
			t.Errorf("switch %d: yaml %+v, conf %+v", i, tree[i], s)
		}
	}
	blk := doc[1].Block
	if !slices.Equal(blk.BlockSizes, []int{3, 6, 12}) {
		t.Errorf("block_sizes %v, want [3 6 12]", blk.BlockSizes)
	}
	var nodes []string
	for _, b := range blk.Blocks {
		nodes = append(nodes, b.Nodes)
	}
	if want := []string{"n[00-02]", "n[03-05]", "n[06-08]", "n[09-11]"}; !slices.Equal(nodes, want) {
		t.Errorf("blocks %v, want %v", nodes, want)
	}
}

// Unequal switches: the base size is the smallest block, and no larger
// size is enforced, since pairing blocks of unequal size would cut across
// the network's levels. Without any switch level, all hosts are one block.
func TestSlurmYAMLUnequalAndFlat(t *testing.T) {
	tp := threeLevel(t)
	tp.Levels[2].Groups = [][]int{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}, {12, 13}, {14, 15, 16, 17}, {18, 19, 20, 21, 22, 23}}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	doc := slurmYAMLDoc(t, tp)
	if got := doc[1].Block.BlockSizes; !slices.Equal(got, []int{1}) {
		t.Errorf("unequal switches: block_sizes %v, want [1]", got)
	}
	if got := len(doc[1].Block.Blocks); got != 5 {
		t.Errorf("unequal switches: %d blocks, want 5", got)
	}
	flat := threeLevel(t)
	flat.Levels = flat.Levels[:2] // core, host
	doc = slurmYAMLDoc(t, flat)
	if b := doc[1].Block; len(b.Blocks) != 1 || b.Blocks[0].Nodes != "n[00-11]" || !slices.Equal(b.BlockSizes, []int{12}) {
		t.Errorf("no switch level: %+v, want one block of all 12 hosts", b)
	}
	one := loadExample(t)
	for i := range one.Ranks {
		one.Ranks[i].Host = "solo"
	}
	one.Tree = nil
	one.Levels = []Level{{Name: "all", Groups: [][]int{{0, 1, 2, 3}}}}
	doc = slurmYAMLDoc(t, one)
	if b := doc[1].Block; len(b.Blocks) != 1 || b.Blocks[0].Nodes != "solo" {
		t.Errorf("one host: %+v", b)
	}
}

// Seeded random topologies: whatever the hierarchy, the output passes the
// schema, the blocks partition the hosts, and every host is in exactly one
// leaf switch of the tree.
func TestSlurmYAMLRandomPassesSchema(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 11))
	for trial := range 100 {
		tp := randomHierarchy(rng)
		doc := slurmYAMLDoc(t, tp)
		_, hosts, _ := tp.HostPartition()
		var inBlocks, inLeaves []string
		for _, b := range doc[1].Block.Blocks {
			hs, _ := ExpandHostlist(b.Nodes)
			inBlocks = append(inBlocks, hs...)
		}
		for _, s := range doc[0].Tree.Switches {
			if s.Nodes != "" {
				hs, _ := ExpandHostlist(s.Nodes)
				inLeaves = append(inLeaves, hs...)
			}
		}
		want := slices.Sorted(slices.Values(hosts))
		if got := slices.Sorted(slices.Values(inBlocks)); !slices.Equal(got, want) {
			t.Fatalf("trial %d: blocks hold %v, want each of %v once", trial, got, want)
		}
		if got := slices.Sorted(slices.Values(inLeaves)); !slices.Equal(got, want) {
			t.Fatalf("trial %d: leaf switches hold %v, want each of %v once", trial, got, want)
		}
	}
}
