package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// the module version or VCS revision recorded by the Go toolchain is shown.
var version = ""

func init() { register(newVersionCmd) }

// versionOptions are 'netaware version”s (none but where to print).
type versionOptions struct{ streams }

func newVersionCmd() *cobra.Command {
	o := &versionOptions{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print netaware's version and the Go toolchain that built it",
		Args:  cobra.NoArgs,
		RunE:  runOptions(o),
	}
}

func (o *versionOptions) validate() error { return nil }

func (o *versionOptions) run(context.Context) error {
	_, err := fmt.Fprintf(o.out, "netaware %s (%s, %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel+" + s.Value[:12]
		}
	}
	return "devel"
}
