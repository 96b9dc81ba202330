package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink matches a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsStandAlone: every link of the README and docs/ points to a file of
// the repository (or to the web), and no page refers to the project's
// files outside it (the design pages, ../shared, /work).
func TestDocsStandAlone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	if len(pages) < 10 {
		t.Fatalf("found %d pages", len(pages))
	}
	outside := regexp.MustCompile(`\.\./shared|/work/|DESIGN\.md|SPEC\.md|PLATFORM\.md|TOPOLOGY\.md`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d: refers to %q, which is not in the repository", rel, i+1, m)
			}
			for _, l := range mdLink.FindAllStringSubmatch(line, -1) {
				target := l[1]
				if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				path := filepath.Clean(filepath.Join(filepath.Dir(page), target))
				if !strings.HasPrefix(path, root+string(filepath.Separator)) {
					t.Errorf("%s:%d: link %s leaves the repository", rel, i+1, l[1])
				} else if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: %v", rel, i+1, l[1], err)
				}
			}
		}
	}
}
