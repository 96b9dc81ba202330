//go:build tools

// Package netaware pins the module's dependencies while packages that use
// them are being written; `go mod tidy` keeps what is imported here.
package netaware

import (
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/cobra"
	_ "go.yaml.in/yaml/v3"
	_ "gonum.org/v1/gonum/graph/community"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
)
