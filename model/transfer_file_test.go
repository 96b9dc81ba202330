package model

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPatternFilesAndFlows(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := []Transfer{{Src: 0, Dst: 3, Bytes: 8 << 20}, {Src: 2, Dst: 1, Bytes: 1000}}
	got, err := ReadPattern(write("p.txt", "# two flows\n0 3 8MiB\n\n2 1 1000 # small\n"), 4)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadPattern: %v, %v", got, err)
	}
	if got, err := ParseFlows("0>3:8MiB, 2>1:1000", 4); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseFlows: %v, %v", got, err)
	}
	if _, err := ReadPattern(write("bad.txt", "0 1 1KiB\n0 4 1KiB\n"), 4); err == nil || !strings.Contains(err.Error(), "bad.txt:2") {
		t.Errorf("rank 4 of 4: %v, want the file and line", err)
	}
	for _, s := range []string{"0>0:1KiB", "0>1", "0>4:1", "a>1:1"} {
		if _, err := ParseFlows(s, 4); err == nil {
			t.Errorf("ParseFlows(%q) accepted", s)
		}
	}
	m, err := ReadCounts(write("m.txt", "0 1KiB\n2,0 # row 2\n"), 2)
	if err != nil || !reflect.DeepEqual(m, [][]float64{{0, 1024}, {2, 0}}) {
		t.Errorf("ReadCounts: %v, %v", m, err)
	}
	if _, err := ReadCounts(write("short.txt", "0 1\n"), 2); err == nil {
		t.Error("one row of a 2x2 matrix accepted")
	}
}
