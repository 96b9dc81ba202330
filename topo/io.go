package topo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"netaware/internal/atomicfile"
)

// Read decodes one topology.json document and validates it. Fields this
// version does not know are ignored, because docs/topology-format.md lets newer writers
// add fields; anything after the document other than white space is an error.
func Read(r io.Reader) (*Topology, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	return Parse(data)
}

// Parse is Read on bytes already in memory.
func Parse(data []byte) (*Topology, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var t Topology
	if err := dec.Decode(&t); err != nil {
		return nil, jsonError(data, err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, jsonError(data, err)
		}
		return nil, fmt.Errorf("topology: unexpected data after the JSON object (%v at byte %d)", tok, dec.InputOffset())
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

// ReadFile reads and validates the topology.json at path; errors name the file.
func ReadFile(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// jsonError adds line:column to decoder errors, which only report byte offsets.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("topology: truncated JSON: %w", err)
	}
	if off < 0 || off > int64(len(data)) {
		return fmt.Errorf("topology: %w", err)
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Errorf("topology: line %d col %d: %w", line, col, err)
}

// Write validates t and writes it as JSON laid out for people: one rank,
// group list, node or edge per line, so that a 4096-rank file stays
// readable and diffs stay small.
func (t *Topology) Write(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			// Only Method.Params can fail (an unsupported value a caller put
			// there); report it through the writer's error below.
			return fmt.Sprintf("%q", "unencodable: "+err.Error())
		}
		return string(b)
	}
	p("{\n  \"version\": %d,\n  \"size\": %d,\n  \"ranks\": [", t.Version, t.Size)
	for i, r := range t.Ranks {
		p("%s\n    %s", comma(i), enc(r))
	}
	p("\n  ],\n  \"levels\": [")
	for i, l := range t.Levels {
		p("%s\n    {\"name\": %s, \"groups\": [", comma(i), enc(l.Name))
		for j, g := range l.Groups {
			p("%s\n      %s", comma(j), enc(g))
		}
		p("\n    ]}")
	}
	p("\n  ]")
	if t.Tree != nil {
		p(",\n  \"tree\": {\n    \"nodes\": [")
		for i, n := range t.Tree.Nodes {
			p("%s\n      %s", comma(i), enc(n))
		}
		p("\n    ],\n    \"edges\": [")
		for i, e := range t.Tree.Edges {
			p("%s\n      %s", comma(i), enc(e))
		}
		p("\n    ]\n  }")
	}
	if t.Method != nil {
		b, err := json.Marshal(t.Method)
		if err != nil {
			return fmt.Errorf("topology method %q: %w", t.Method.Name, err)
		}
		p(",\n  \"method\": %s", b)
	}
	if t.Measurements != nil {
		p(",\n  \"measurements\": %s", enc(t.Measurements))
	}
	p("\n}\n")
	return bw.Flush()
}

func comma(i int) string {
	if i == 0 {
		return ""
	}
	return ","
}

// WriteFile writes t to path atomically: readers see the old file or the
// new one, never half of it (temp file in the same directory, fsync, rename).
func (t *Topology) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := t.Write(&buf); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// WriteFileAtomic is atomicfile.WriteFile, kept so that code written
// against it still builds.
//
// Deprecated: use netaware/internal/atomicfile.WriteFile.
func WriteFileAtomic(path string, data []byte) error { return atomicfile.WriteFile(path, data) }
