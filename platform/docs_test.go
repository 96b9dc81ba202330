package platform

import (
	"os"
	"strings"
	"testing"
)

// codeBlocks returns the fenced blocks of a Markdown file tagged lang.
func codeBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	rest := string(b)
	for {
		i := strings.Index(rest, "```"+lang+"\n")
		if i < 0 {
			return blocks
		}
		rest = rest[i+len(lang)+4:]
		j := strings.Index(rest, "```\n")
		if j < 0 {
			t.Fatalf("%s: unclosed %s block", path, lang)
		}
		blocks = append(blocks, rest[:j])
		rest = rest[j:]
	}
}

// TestFormatPageExamplesParse: docs/platform-format.md promises that its
// examples parse: the platform, and the platform with the truth snippet.
func TestFormatPageExamplesParse(t *testing.T) {
	const page = "../docs/platform-format.md"
	blocks := codeBlocks(t, page, "yaml")
	if len(blocks) != 2 {
		t.Fatalf("%s: %d yaml blocks, want the example and the truth snippet", page, len(blocks))
	}
	p, err := Parse(page, []byte(blocks[0]))
	if err != nil {
		t.Fatal(err)
	}
	if p.NumRanks() != 30 || len(p.Switches()) != 3 {
		t.Errorf("example: %d ranks, %d switches", p.NumRanks(), len(p.Switches()))
	}
	p, err = Parse(page, []byte(blocks[0]+blocks[1]))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range p.Truth() {
		if l.Name == "bandwidth-cluster" && len(l.Groups) == 2 && len(l.Groups[0]) == 20 {
			found = true
		}
	}
	if !found {
		t.Errorf("truth snippet: levels %v", p.Truth())
	}
}
