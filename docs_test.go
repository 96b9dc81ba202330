package netaware

import (
	"os"
	"strings"
	"testing"
)

// The complete program of docs/library.md is examples/allreduce/main.go,
// which go vet and go build compile: the page must show it as it is.
func TestLibraryPageShowsTheProgram(t *testing.T) {
	page, err := os.ReadFile("docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := os.ReadFile("examples/allreduce/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```go\n"+string(prog)+"```") {
		t.Error("docs/library.md does not show examples/allreduce/main.go as it is")
	}
}
