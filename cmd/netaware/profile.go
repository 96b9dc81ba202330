package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"netaware/internal/atomicfile"
)

// profiling holds the hidden --cpuprofile and --memprofile flags, for the
// scaling figures of docs/scaling.md (go tool pprof reads the files).
type profiling struct {
	cpu, mem string
	cpuFile  *os.File
}

func (p *profiling) flags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	f.StringVar(&p.mem, "memprofile", "", "write a heap profile at the end of the command to this file")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
}

// validate rejects one file for both profiles (the heap profile would
// overwrite the CPU profile at the end).
func (p *profiling) validate() error {
	if p.cpu != "" && p.mem != "" && filepath.Clean(p.cpu) == filepath.Clean(p.mem) {
		return usagef("--cpuprofile and --memprofile name the same file %s", p.cpu)
	}
	return nil
}

// start starts the CPU profile (validate ran before).
func (p *profiling) start() error {
	if p.cpu == "" {
		return nil
	}
	f, err := atomicfile.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile %s: %w", p.cpu, err)
	}
	p.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the heap profile (after a GC, so
// that it shows what is live, with the allocations of the whole run).
func (p *profiling) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile %s: %w", p.cpu, err)
		}
		p.cpuFile = nil
	}
	if p.mem == "" {
		return nil
	}
	f, err := atomicfile.Create(p.mem)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile %s: %w", p.mem, err)
	}
	return f.Close()
}
