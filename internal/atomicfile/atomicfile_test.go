package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFileModeContentAndNoLeftovers(t *testing.T) {
	// Under a strict umask too, results come out 0644: the mode is set, not
	// left to the temporary file's 0600.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "dataset.json")
	for _, content := range []string{"first, longer content\n", "second\n"} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("read back %q, %v; want %q", b, err, content)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", st.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only dataset.json (no temporary file left)", len(entries))
	}
}

func TestWriteFileFailureKeepsOldContentAndNamesPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing-dir", "x.json")
	err := WriteFile(path, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("write into a missing directory: %v; want an error naming %s", err, path)
	}
	// Renaming onto a directory fails after the temporary file was written:
	// the directory stays, and no temporary file is left.
	target := filepath.Join(dir, "taken")
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "keep"), []byte("k"), 0o644)
	if err := WriteFile(target, []byte("new")); err == nil {
		t.Fatal("rename onto a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries after a failed write, want 1 (the directory)", len(entries))
	}
}

func TestCreateModeUnderStrictUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "cpu.prof")
	if err := os.WriteFile(path, []byte("old, longer content"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("content %q, mode %v; want \"new\", 0644", b, st.Mode().Perm())
	}
}
