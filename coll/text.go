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
	writeSteps(&b, "", s.Size, s.StepsOf)
	writeSteps(&b, "reduce-scatter ", s.Size, s.ScatterStepsOf)
	for i, st := range s.Stages {
		for _, g := range st.Groups {
			fmt.Fprintf(&b, "stage %d: %s on %v, root %d\n", i, g.Sched.Name, g.Ranks, g.Ranks[g.Sched.Root])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSteps writes one line per transfer, marking those whose receiver
// combines the parts with the reduction.
func writeSteps(b *strings.Builder, prefix string, size int, stepsOf func(int) []Step) {
	if stepsOf == nil {
		return
	}
	combined := map[stepKey]bool{}
	for r := range size {
		for _, st := range stepsOf(r) {
			if !st.Send && st.Reduce {
				combined[stepKey{st.Round, st.Peer, r, st.Parts}] = true
			}
		}
	}
	for r := range size {
		for _, st := range stepsOf(r) {
			if st.Send {
				fmt.Fprintf(b, "%sround %d: %d -> %d parts [%d,%d)", prefix, st.Round, r, st.Peer, st.Parts.Lo, st.Parts.Hi)
				if combined[stepKey{st.Round, r, st.Peer, st.Parts}] {
					b.WriteString(" combined")
				}
				b.WriteString("\n")
			}
		}
	}
}
