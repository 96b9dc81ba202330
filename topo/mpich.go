package topo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Coord is one rank's line of an MPICH coordinates file.
type Coord struct {
	Rank, Group, Switch, Port int
}

// MPICHCoords derives each rank's (group, switch, port) for MPICH's
// MPIR_CVAR_COORDINATES_FILE. The switch is the rank's group in the first
// level coarser than hosts (or than the finest level when hosts are
// unknown), the group its group in the next coarser level (0 if there is
// none), numbered by lowest rank. The port is -1: a tree inferred from
// end-to-end measurements does not know switch port numbers, and -1 is what
// MPICH's own example file uses for "unknown".
func (t *Topology) MPICHCoords() ([]Coord, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	base, _, err := t.HostPartition()
	if err != nil {
		if len(t.Levels) == 0 {
			return nil, fmt.Errorf("mpich coordinates: no host names and no levels: %w", err)
		}
		base = t.Levels[0].Groups
	}
	chain := coarserChain(base, t.Levels, t.Size)
	coords := make([]Coord, t.Size)
	for r := range coords {
		coords[r] = Coord{Rank: r, Port: -1}
	}
	if len(chain) > 0 {
		for r, g := range chain[0].Labels(t.Size) {
			coords[r].Switch = g
		}
	}
	if len(chain) > 1 {
		for r, g := range chain[1].Labels(t.Size) {
			coords[r].Group = g
		}
	}
	return coords, nil
}

// WriteMPICHCoords writes the coordinates file MPICH reads when
// MPIR_CVAR_COORDINATES_FILE names it: MPICH skips the first line, then
// reads "rank: group_id switch_id port" for every rank. Lines end right
// after the last number, because MPICH counts the fields of the first entry
// by looking for the newline there.
func (t *Topology) WriteMPICHCoords(w io.Writer) error {
	coords, err := t.MPICHCoords()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("# rank: group_id switch_id port (netaware; port -1 = unknown)\n")
	for _, c := range coords {
		fmt.Fprintf(&b, "%d: %d %d %d\n", c.Rank, c.Group, c.Switch, c.Port)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// ReadMPICHCoords parses a coordinates file: the first line is skipped (as
// MPICH does), then one "rank: group switch port" line per rank, every rank
// 0..n-1 exactly once. Blank lines are ignored.
func ReadMPICHCoords(r io.Reader) ([]Coord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	var coords []Coord
	seen := map[int]int{}
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		rs, rest, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("coords:%d: %q: want \"rank: group switch port\"", line, text)
		}
		f := strings.Fields(rest)
		if len(f) != 3 {
			return nil, fmt.Errorf("coords:%d: %d coordinates, want 3 (group switch port)", line, len(f))
		}
		var v [4]int
		for i, s := range append([]string{strings.TrimSpace(rs)}, f...) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("coords:%d: %q is not an integer", line, s)
			}
			v[i] = n
		}
		if v[0] < 0 || v[0] > maxRank {
			return nil, fmt.Errorf("coords:%d: rank %d out of range", line, v[0])
		}
		if prev, dup := seen[v[0]]; dup {
			return nil, fmt.Errorf("coords:%d: rank %d already given on line %d", line, v[0], prev)
		}
		seen[v[0]] = line
		coords = append(coords, Coord{Rank: v[0], Group: v[1], Switch: v[2], Port: v[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("coords:%d: %w", line+1, err)
	}
	if len(coords) == 0 {
		return nil, fmt.Errorf("coords: no ranks")
	}
	out := make([]Coord, len(coords))
	for _, c := range coords {
		if c.Rank >= len(coords) {
			return nil, fmt.Errorf("coords: rank %d given but only %d ranks: ranks must be 0..%d", c.Rank, len(coords), len(coords)-1)
		}
		out[c.Rank] = c
	}
	return out, nil
}

// CoordsLevels turns coordinates into levels: "switch" groups ranks with
// the same (group, switch), "group" those with the same group, "all" the
// rest; repeated partitions are dropped.
func CoordsLevels(coords []Coord) []Level {
	bySwitch := map[[2]int]int{}
	byGroup := map[int]int{}
	var sw, gr [][]int
	for _, c := range coords {
		k := [2]int{c.Group, c.Switch}
		i, ok := bySwitch[k]
		if !ok {
			i = len(sw)
			bySwitch[k] = i
			sw = append(sw, nil)
		}
		sw[i] = append(sw[i], c.Rank)
		j, ok := byGroup[c.Group]
		if !ok {
			j = len(gr)
			byGroup[c.Group] = j
			gr = append(gr, nil)
		}
		gr[j] = append(gr[j], c.Rank)
	}
	all := make([]int, len(coords))
	for i := range all {
		all[i] = i
	}
	var out []Level
	for _, l := range []Level{{Name: "switch", Groups: sw}, {Name: "group", Groups: gr}, {Name: "all", Groups: [][]int{all}}} {
		if len(out) > 0 && EqualGroups(out[len(out)-1].Groups, l.Groups) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// ReadMPICHCoordsTopology reads a coordinates file as a topology with levels.
func ReadMPICHCoordsTopology(r io.Reader) (*Topology, error) {
	c, err := ReadMPICHCoords(r)
	if err != nil {
		return nil, err
	}
	return topologyFromLevels(len(c), CoordsLevels(c), "mpich-coordinates")
}
