// Package atomicfile writes output files so that a reader, a crash or an
// interrupt never leaves half of one: every file netaware writes (datasets,
// topologies, models, reports, rule files, exports) goes through it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Mode is the permission of every file written: readable by all, as
// os.Create would make it under the usual umask 022. It is set explicitly
// because the temporary file starts as 0600, and results are meant to be
// shared (a checkpointed dataset once came out 0600 next to a 0644
// topology).
const Mode os.FileMode = 0o644

// WriteFile writes data to path through a temporary file in the same
// directory, synced and then renamed over path: path holds either its old
// content or all of data. Errors name path.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(Mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return nil
}

// Create creates or truncates path for an output written as a stream while
// a command runs (a CPU profile, a rank's log), which cannot wait for a
// rename at the end. It is not all-or-nothing, but its mode is Mode, set
// explicitly as WriteFile sets it, so that no umask makes it private.
func Create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, Mode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(Mode); err != nil {
		f.Close()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return f, nil
}
