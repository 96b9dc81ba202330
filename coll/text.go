package coll

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the schedule for people (and for logging the generated
// tree, as CPM does): one line per rank with children, then the spans,
// steps and stages when there are any.
func (s *Schedule) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule %s (%s): %d ranks, root %d, depth %d", s.Name, s.Kind, s.Size, s.Root, s.Depth())
	if s.SegSize > 0 {
		fmt.Fprintf(&b, ", segments of %d bytes", s.SegSize)
	}
	if s.Small != nil {
		fmt.Fprintf(&b, ", below %d bytes: %s", s.SmallBelow, s.Small.Name)
	}
	b.WriteString("\n")
	for _, r := range s.Preorder() {
		depth := 0
		for x := r; s.Parent[x] >= 0; x = s.Parent[x] {
			depth++
		}
		fmt.Fprintf(&b, "%s%d", strings.Repeat("  ", depth), r)
		if s.NParts > 0 && s.Span != nil {
			fmt.Fprintf(&b, " parts [%d,%d) of %d", s.Span[r].Lo, s.Span[r].Hi, s.NParts)
		}
		if len(s.Children[r]) > 0 {
			fmt.Fprintf(&b, " -> %v", s.Children[r])
		}
		b.WriteString("\n")
	}
	if s.StepsOf != nil {
		for r := range s.Size {
			for _, st := range s.StepsOf(r) {
				if st.Send {
					fmt.Fprintf(&b, "round %d: %d -> %d parts [%d,%d)\n", st.Round, r, st.Peer, st.Parts.Lo, st.Parts.Hi)
				}
			}
		}
	}
	for i, st := range s.Stages {
		for _, g := range st.Groups {
			fmt.Fprintf(&b, "stage %d: %s on %v, root %d\n", i, g.Sched.Name, g.Ranks, g.Ranks[g.Sched.Root])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
