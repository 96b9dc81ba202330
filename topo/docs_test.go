package topo

import (
	"os"
	"strings"
	"testing"
)

// TestFormatPageExampleIsValid: docs/topology-format.md's example is a
// valid topology.json.
func TestFormatPageExampleIsValid(t *testing.T) {
	b, err := os.ReadFile("../docs/topology-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "```json\n")
	if i < 0 {
		t.Fatal("no json block")
	}
	s = s[i+8:]
	s = s[:strings.Index(s, "```\n")]
	tp, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if tp.Size != 4 || len(tp.Levels) != 3 || tp.Tree == nil || len(tp.Tree.Edges) != 6 {
		t.Errorf("example: %+v", tp)
	}
}
