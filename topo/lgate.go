package topo

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// WriteLGate writes the topology as an LGate group file (seed 003, Sect.
// 3.1.1, Fig. 3.4): nested "cluster { ... }" blocks whose leaves are
// "cluster { group { 0-7 } }". LGate tests the pairs inside each leaf group
// in parallel with the other leaves, then joins sibling clusters, so the
// leaves should be groups that do not interfere: we use the finest level
// that is not all single ranks (hosts, usually), and nest the coarser
// levels above it. Non-contiguous groups are written as comma-separated
// ranges ("0-3,8-11"), an extension: the seed only shows single ranges.
func (t *Topology) WriteLGate(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if len(t.Levels) == 0 {
		return fmt.Errorf("lgate: topology has no levels")
	}
	leaf := 0
	for i, l := range t.Levels {
		if len(l.Groups) < t.Size {
			leaf = i
			break
		}
	}
	base := t.Levels[leaf].Groups
	root := nestFromLevels(base, coarserChain(base, t.Levels[leaf+1:], t.Size), t.Size, false)
	var b bytes.Buffer
	var emit func(n *nest, depth int)
	emit = func(n *nest, depth int) {
		ind := strings.Repeat(" ", depth)
		if len(n.kids) == 0 {
			fmt.Fprintf(&b, "%scluster { group { %s } }\n", ind, FormatRanks(n.ranks))
			return
		}
		fmt.Fprintf(&b, "%scluster {\n", ind)
		for _, k := range n.kids {
			emit(k, depth+1)
		}
		fmt.Fprintf(&b, "%s}\n", ind)
	}
	emit(root, 0)
	_, err := w.Write(b.Bytes())
	return err
}

// maxLGateDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxLGateDepth = 256

// ReadLGate parses an LGate group file into nested groups and returns them
// as levels by height ("lgate-0" = the leaf groups, then one level per
// nesting layer, coarsest last). The ranks in all groups must be exactly
// 0..n-1. Groups may hold several comma- or space-separated ranges.
func ReadLGate(r io.Reader) (*Topology, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("lgate: %w", err)
	}
	p := &lgateParser{src: string(data), line: 1}
	var roots []*nest
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			break
		}
		n, err := p.item(0)
		if err != nil {
			return nil, err
		}
		roots = append(roots, n)
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("lgate: no clusters")
	}
	seen := map[int]bool{}
	maxR := -1
	for _, root := range roots {
		for _, r := range root.allRanks() {
			if seen[r] {
				return nil, fmt.Errorf("lgate: rank %d appears in more than one group", r)
			}
			seen[r] = true
			maxR = max(maxR, r)
		}
	}
	for r := 0; r <= maxR; r++ {
		if !seen[r] {
			return nil, fmt.Errorf("lgate: rank %d is in no group (ranks must be 0..%d)", r, maxR)
		}
	}
	return topologyFromLevels(maxR+1, levelsFromNest(roots, "lgate"), "lgate-group-file")
}

type lgateParser struct {
	src  string
	pos  int
	line int
}

func (p *lgateParser) errorf(format string, a ...any) error {
	return fmt.Errorf("lgate:%d: %s", p.line, fmt.Sprintf(format, a...))
}

func (p *lgateParser) skipSpace() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == '#': // comments, an extension for hand-written files
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *lgateParser) word() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

func (p *lgateParser) expect(c byte) error {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return p.errorf("unexpected end of file, want %q", c)
	}
	if p.src[p.pos] != c {
		return p.errorf("found %q, want %q", p.src[p.pos], c)
	}
	p.pos++
	return nil
}

// item parses "cluster { item... }" or "group { ranges }".
func (p *lgateParser) item(depth int) (*nest, error) {
	if depth > maxLGateDepth {
		return nil, p.errorf("clusters nested deeper than %d", maxLGateDepth)
	}
	switch w := p.word(); w {
	case "cluster":
		if err := p.expect('{'); err != nil {
			return nil, err
		}
		n := &nest{}
		for {
			p.skipSpace()
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				p.pos++
				break
			}
			if p.pos >= len(p.src) {
				return nil, p.errorf("unexpected end of file inside cluster")
			}
			k, err := p.item(depth + 1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, k)
		}
		if len(n.kids) == 0 {
			return nil, p.errorf("empty cluster")
		}
		return n, nil
	case "group":
		if err := p.expect('{'); err != nil {
			return nil, err
		}
		end := strings.IndexByte(p.src[p.pos:], '}')
		if end < 0 {
			return nil, p.errorf("group not closed with '}'")
		}
		body := p.src[p.pos : p.pos+end]
		ranks, err := ParseRanks(body)
		if err != nil {
			return nil, p.errorf("group { %s }: %v", strings.TrimSpace(body), err)
		}
		if len(ranks) == 0 {
			return nil, p.errorf("empty group")
		}
		p.line += strings.Count(body, "\n")
		p.pos += end + 1
		return &nest{ranks: ranks}, nil
	case "":
		if p.pos < len(p.src) {
			return nil, p.errorf("unexpected %q, want cluster or group", p.src[p.pos])
		}
		return nil, p.errorf("unexpected end of file, want cluster or group")
	default:
		return nil, p.errorf("unknown keyword %q, want cluster or group", w)
	}
}
