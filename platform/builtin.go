package platform

import (
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// BuiltinInfo names a built-in platform.
type BuiltinInfo struct {
	Name        string
	Description string
}

func builtinFile(name string) string { return "builtin/" + name + ".yaml" }

func builtinData(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, false
	}
	data, err := builtinFS.ReadFile(builtinFile(name))
	return data, err == nil
}

// Builtins lists the built-in platforms, sorted by name.
func Builtins() []BuiltinInfo {
	entries, _ := builtinFS.ReadDir("builtin")
	var out []BuiltinInfo
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		info := BuiltinInfo{Name: name}
		if p, err := Load(name); err == nil {
			info.Description = p.Description
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Source returns the text of a built-in platform, or of the file at path
// nameOrPath.
func Source(nameOrPath string) ([]byte, error) {
	if data, ok := builtinData(nameOrPath); ok {
		return data, nil
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("platform: %w", err)
	}
	return data, nil
}
