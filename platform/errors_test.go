package platform

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// exampleWith returns the docs/platform-format.md example with one line replaced, and
// that line's number.
func exampleWith(t *testing.T, old, repl string) (string, int) {
	t.Helper()
	data, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("%q not in example", old)
	}
	return s[:i] + repl + s[i+len(old):], strings.Count(s[:i], "\n") + 1
}

func TestErrorsNameFileLineKey(t *testing.T) {
	cases := []struct {
		old, repl, want string
	}{
		{`link: {bandwidth: 1Gbps, latency: 10us}}
  - {names: "b`, `link: {bandwidth: 10Gbs, latency: 10us}}
  - {names: "b`,
			`hosts[0].link.bandwidth: "10Gbs": unknown unit (want bps, Kbps, Mbps, Gbps, Bps, KBps, MBps, GBps)`},
		{`  per_host: 1 `, `  per_hosts: 1 `, `ranks.per_hosts: unknown key (want per_host, order)`},
		{`  order: block `, `  order: random `, `ranks.order: "random": want block or cyclic`},
		{`    sockets: 2`, `    socket: 2`, `host_types.node12.socket: unknown key`},
		{`latency: 2us, duplex: full}`, `latency: 2us, duplex: fast}`, `links[1].duplex: "fast": want half or full`},
		{`switch: torB, type`, `switch: torC, type`, `hosts[1].switch: "torC": no such switch`},
		{`type: node12, link: {bandwidth: 1Gbps, latency: 10us}}
  - {names: "b`, `type: node13, link: {bandwidth: 1Gbps, latency: 10us}}
  - {names: "b`, `hosts[0].type: "node13": no such host type`},
		{`"b[00-14]"`, `"a[10-14]"`, `hosts[1].names: "a10": name already used by hosts[0].names`},
		{`  crosstraffic: 0.05 `, `  crosstraffic: 2 `, `tcp.crosstraffic: "2": want a number from 0 to 1`},
		{`  window_bytes: 4194304 `, `  window_bytes: 4MB `, `tcp.window_bytes: "4MB": unknown unit`},
		{`  window_bytes: 4194304 `, `  queue: -5ms `, `tcp.queue: "-5ms": time must not be negative`},
		{`  window_bytes: 4194304 `, `  send_buffer: -1MiB `, `tcp.send_buffer: "-1MiB": size must not be negative`},
		{`  window_bytes: 4194304 `, `  send_buffer: 1.5 `, `tcp.send_buffer: "1.5": not a whole number of bytes`},
		{`  window_bytes: 4194304 `, `  sharing: fair `, `tcp.sharing: "fair": want maxmin or rtt`},
		{`version: 1`, `version: 2`, `version: 2: this netaware reads version 1`},
		{`inter_socket: {bandwidth: 20GBps, latency: 0.6us}`, `inter_socket: {bandwidth: 20GBps, latency: -1us}`, `host_types.node12.inter_socket.latency: "-1us": time must not be negative`},
		{`  seed: 1`, `  seed: one`, `noise.seed: "one": want a whole number`},
		{`  seed: 1`, `  profile: wild`, `noise.profile: noise profile "wild": want "realistic"`},
		{`switches: [core, torA, torB]`, `switches: [core, torA, torB, core]`, `switches[3]: "core": name already used by switches[0]`},
	}
	for _, c := range cases {
		src, line := exampleWith(t, c.old, c.repl)
		_, err := Parse("grid.yaml", []byte(src))
		if err == nil {
			t.Errorf("%q accepted", c.repl)
			continue
		}
		prefix := "grid.yaml:" + strconv.Itoa(line) + ": "
		if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q; want prefix %q containing %q", err, prefix, c.want)
		}
	}
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + func() string { return fmtInt(i) }())
}

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}

func TestErrorExactFormat(t *testing.T) {
	src, line := exampleWith(t, `link: {bandwidth: 1Gbps, latency: 10us}}
ranks`, `link: {bandwidth: 10Gbs, latency: 10us}}
ranks`)
	_, err := Parse("grid.yaml", []byte(src))
	want := "grid.yaml:" + strconv.Itoa(line) + `: hosts[1].link.bandwidth: "10Gbs": unknown unit (want bps, Kbps, Mbps, Gbps, Bps, KBps, MBps, GBps)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestUnreachableHostNamed(t *testing.T) {
	src, _ := exampleWith(t, "  - {between: [torB, core], bandwidth: 10Gbps, latency: 2us, duplex: full}\n", "")
	_, err := Parse("grid.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "host b00 (switch torB) is unreachable") {
		t.Errorf("got %v", err)
	}
}

func TestMissingAndMalformed(t *testing.T) {
	cases := map[string]string{
		"":                                       "empty file",
		"version: 1\n":                           `missing key "switches"`,
		"version: 1\nswitches: [s]\nhosts: []\n": "no hosts",
		"[1, 2]":                                 "want a mapping",
		"version: 1\nswitches: [s]\nhosts:\n  - {names: h, switch: s, link: {bandwidth: 1Gbps}}\n": `hosts[0].link: missing key "latency"`,
		"version: 1\nswitches: &x [s]\nhosts: *x\n":                                                "aliases",
		"version: 1\nversion: 1\n":                                                                 "key given twice",
		"{":                                                                                        "",
	}
	for src, want := range cases {
		_, err := Parse("f.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), "f.yaml") || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v; want it to contain %q", src, err, want)
		}
	}
}

func TestPlacementNeedsMemoryPaths(t *testing.T) {
	src, _ := exampleWith(t, "    intra_socket: {bandwidth: 40GBps, latency: 0.3us}   # core to core, same socket\n", "")
	src = strings.Replace(src, "per_host: 1 ", "per_host: 2 ", 1)
	_, err := Parse("grid.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "intra_socket is not set") {
		t.Errorf("got %v", err)
	}
}

// TestYAMLSyntaxErrorLines: syntax errors name the right line (the YAML
// library's parser counts from 0, which pointed one line early).
func TestYAMLSyntaxErrorLines(t *testing.T) {
	head := "version: 1\nswitches: [s]\nhosts:\n"
	for _, tc := range []struct{ src, want string }{
		// An unclosed flow mapping on line 6: the parser's error.
		{head + "  - names: \"h[1-2]\"\n    switch: s\n    link: {bandwidth: 10Gbps, latency: 1us\nranks: {per_host: 1}\n",
			"f.yaml:6: did not find expected ',' or '}' while parsing a flow mapping"},
		// A misindented key in the sequence starting on line 4.
		{head + "  - names: \"h[1-2]\"\n    switch: s\n   link: x\n",
			"f.yaml:4: did not find expected '-' indicator while parsing a block sequence"},
		// An unclosed flow sequence on line 2.
		{"version: 1\nswitches: [s\nhosts: []\n", "f.yaml:2: did not find expected ',' or ']' while parsing a flow sequence"},
		// A tab on line 5: the scanner's error, already counted from 1.
		{head + "  - names: \"h[1-2]\"\n\tswitch: s\n", "f.yaml:5: found character that cannot start any token"},
	} {
		_, err := Parse("f.yaml", []byte(tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// tcp.queue is read as a time (the sim's link buffer), tcp.send_buffer as
// a size, tcp.sharing as maxmin or rtt; absent, 0, 0 and maxmin.
func TestTCPQueueAndSendBuffer(t *testing.T) {
	src, _ := exampleWith(t, `  window_bytes: 4194304 `, `  queue: 50ms `)
	p, err := Parse("grid.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if q := p.TCP().QueueS; q != 0.05 {
		t.Errorf("tcp.queue 50ms read as %v s", q)
	}
	src, _ = exampleWith(t, `  window_bytes: 4194304 `, ``)
	if p, err = Parse("grid.yaml", []byte(src)); err != nil || p.TCP().QueueS != 0 || p.TCP().SendBufferBytes != 0 || p.TCP().RTTSharing {
		t.Errorf("without tcp.queue, tcp.send_buffer and tcp.sharing: %v, queue %v s, send buffer %d bytes, RTT sharing %v; want 0, 0, max-min",
			err, p.TCP().QueueS, p.TCP().SendBufferBytes, p.TCP().RTTSharing)
	}
	src, _ = exampleWith(t, `  window_bytes: 4194304 `, `  send_buffer: 1MiB `)
	if p, err = Parse("grid.yaml", []byte(src)); err != nil || p.TCP().SendBufferBytes != 1<<20 {
		t.Errorf("tcp.send_buffer 1MiB: %v, read as %d bytes", err, p.TCP().SendBufferBytes)
	}
	for v, want := range map[string]bool{"rtt": true, "maxmin": false} {
		src, _ = exampleWith(t, `  window_bytes: 4194304 `, `  sharing: `+v+` `)
		if p, err = Parse("grid.yaml", []byte(src)); err != nil || p.TCP().RTTSharing != want {
			t.Errorf("tcp.sharing %s: %v, RTT sharing %v", v, err, p.TCP().RTTSharing)
		}
	}
}
