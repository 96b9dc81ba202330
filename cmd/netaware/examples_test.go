package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// exampleBound is how long any example may take (the promise of --help).
const exampleBound = 2 * time.Minute

// example is one command line of a help text, with the output lines the
// help shows after it (if any).
type example struct {
	line   string
	output []string
}

var exampleHeader = regexp.MustCompile(`(?m)^Examples?:\s*$`)

// launcherWords start example lines that are commands, not output.
var launcherWords = map[string]bool{"netaware": true, "mpirun": true, "mpiexec": true, "srun": true, "smpirun": true, "printf": true}

// isCommand reports whether an example line is a command (its first word,
// after VAR=value assignments, is a program the examples use).
func isCommand(line string) bool {
	for _, w := range strings.Fields(line) {
		if strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
			continue // VAR=value
		}
		return launcherWords[w]
	}
	return false
}

// helpExamples parses a command's examples: its Example field and the
// "Example(s):" section of its long help. Continuation lines (ending in
// "\") are joined; lines that are not commands are the output shown for
// the command before them.
func helpExamples(c *cobra.Command) []example {
	text := c.Example
	if loc := exampleHeader.FindStringIndex(c.Long); loc != nil {
		text += "\n" + c.Long[loc[1]:]
	}
	var out []example
	var pending string
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if pending != "" {
			line = pending + " " + line
			pending = ""
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSpace(strings.TrimSuffix(line, `\`))
			continue
		}
		switch {
		case line == "":
		case isCommand(line):
			out = append(out, example{line: line})
		case len(out) > 0:
			out[len(out)-1].output = append(out[len(out)-1].output, line)
		}
	}
	return out
}

// skipReason says why an example cannot run here, or "".
func skipReason(line string) string {
	line = leadingVars.ReplaceAllString(line, "") // docExamples' carried assignments
	switch {
	case strings.Contains(line, "# recipe"):
		return "a recipe that reproduces a measured table, marked as taking longer than an example may"
	case strings.HasPrefix(line, "printf "):
		return "" // writes an input file of the next examples
	case !strings.HasPrefix(strings.Fields(line)[0], "netaware"):
		return "runs an MPI launcher or program, not netaware"
	case strings.Contains(line, "netaware launch") || strings.Contains(line, "--hostfile"):
		return "starts a TCP world of processes (netaware launch); covered by TestTCPWorld"
	case strings.Contains(line, "netaware emu"):
		return "builds network namespaces (needs root); covered by package emu's tests"
	case strings.Contains(line, "/etc/"):
		return "writes a system file"
	}
	for _, prog := range []string{"dot", "less", "jq"} {
		if regexp.MustCompile(`(\||&&)\s*` + prog + `\b`).MatchString(line) {
			if _, err := exec.LookPath(prog); err != nil {
				return "needs " + prog
			}
		}
	}
	return ""
}

func TestHelpExamplesParse(t *testing.T) {
	var all []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, helpExamples(c)...)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
	if len(all) < 40 {
		t.Fatalf("%d examples found; the parser misses some", len(all))
	}
	got := map[string][]string{}
	for _, e := range all {
		got[e.line] = e.output
	}
	// A continuation line is joined; an output line belongs to its command.
	if _, ok := got["netaware tune bcast --platform zhu-2racks --per-host 2 --out tuned/ --sizes 1,64KiB,1MiB --reps 3"]; !ok {
		t.Error("tune bcast's two-line example not joined")
	}
	if out := got["netaware platform validate grid.yaml"]; len(out) != 1 || !strings.HasPrefix(out[0], "grid.yaml:12: ") {
		t.Errorf("platform validate's shown output: %q", out)
	}
}

// exampleFixtures writes the input files the examples name into dir: a
// topology of zhu-2racks, platform files (grid.yaml with the error its
// example shows), and an LGate group file.
func exampleFixtures(t *testing.T, bin, dir string) {
	t.Helper()
	sh := func(cmd string) {
		t.Helper()
		c := exec.Command("sh", "-c", cmd)
		c.Dir, c.Env = dir, append(cleanEnv(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("fixture %q: %v\n%s", cmd, err, out)
		}
	}
	sh("netaware discover --platform zhu-2racks --level fast --out fx >/dev/null 2>&1 && cp fx/topology.json topology.json && rm -r fx")
	sh("cp topology.json found.json && cp topology.json expected.json")
	sh("netaware platform show zhu-2racks --source > platform.yaml && cp platform.yaml mygrid.yaml && cp platform.yaml other.yaml")
	sh("netaware topo convert topology.json --to lgate -o groups.lgate")
	grid := `version: 1
name: grid
switches: [s1, s2, core]
links:
  - {between: [s1, core], bandwidth: 10Gbps, latency: 5us}
  - {between: [s2, core], bandwidth: 10Gbps, latency: 5us}
hosts:
  - names: "a[1-4]"
    switch: s1
    link: {bandwidth: 1Gbps, latency: 10us}
  - names: "b[1-4]"
    link: {bandwidth: 10Gbs, latency: 10us}
    switch: s2
`
	if err := os.WriteFile(filepath.Join(dir, "grid.yaml"), []byte(grid), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runExample runs one example line with sh in dir, within the bound; the
// output the help shows after it must appear (then a failure exit is what
// the example demonstrates).
func runExample(t *testing.T, bin, dir string, e example) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exampleBound)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", e.line)
	c.Dir, c.Env = dir, append(cleanEnv(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	c.WaitDelay = time.Second
	start := time.Now()
	out, err := c.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Errorf("%s: not finished after %v", e.line, exampleBound)
		return
	}
	for _, want := range e.output {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s: output lacks the line its help shows, %q:\n%s", e.line, want, out)
		}
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && len(e.output) > 0) {
		t.Errorf("%s: %v\n%s", e.line, err, out)
	}
	t.Logf("%6.1fs  %s", took.Seconds(), e.line)
}

// TestHelpExamplesFinish runs every example of every command's --help, in
// the order shown, each command's in a directory of its own holding the
// files they read, and checks each finishes within 2 minutes. Opt-in
// (NETAWARE_EXAMPLES=1): all of them take 1.5-4 minutes on two busy cores (60 run, 38 skipped).
func TestHelpExamplesFinish(t *testing.T) {
	if os.Getenv("NETAWARE_EXAMPLES") == "" {
		t.Skip("set NETAWARE_EXAMPLES=1 to run every --help example (1.5-4 minutes)")
	}
	bin := buildNetaware(t)
	fixtures := t.TempDir()
	exampleFixtures(t, bin, fixtures)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if exs := helpExamples(c); len(exs) > 0 {
			t.Run(c.CommandPath(), func(t *testing.T) {
				dir := t.TempDir()
				if err := exec.Command("sh", "-c", "cp -r '"+fixtures+"'/. '"+dir+"'").Run(); err != nil {
					t.Fatal(err)
				}
				for _, e := range exs {
					if why := skipReason(e.line); why != "" {
						t.Logf("skip %s: %s", e.line, why)
						continue
					}
					runExample(t, bin, dir, e)
				}
			})
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
}

// TestREADMEWalk runs the commands of the README's "Use" section in
// order, in a fresh directory, as a new user following it would; each
// within 2 minutes. Opt-in with the examples (NETAWARE_EXAMPLES=1).
func TestREADMEWalk(t *testing.T) {
	if os.Getenv("NETAWARE_EXAMPLES") == "" {
		t.Skip("set NETAWARE_EXAMPLES=1 to walk the README (under a minute)")
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Use")
	if i < 0 {
		t.Fatal("README has no Use section")
	}
	s = s[i:]
	s = s[strings.Index(s, "```sh\n")+6:]
	s = s[:strings.Index(s, "```")]
	bin := buildNetaware(t)
	dir := t.TempDir()
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		n++
		runExample(t, bin, dir, example{line: line})
	}
	if n < 6 {
		t.Errorf("only %d commands in the README's Use section", n)
	}
	for _, f := range []string{"netaware-out/topology.json", "netaware-out/report.html", "fram-out/topology.json", "plogp.json", "launch-out/topology.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after the README: %v", err)
		}
	}
}

// docExamples returns the netaware command lines of a Markdown file's
// shell code blocks (fenced as sh, bash, shell or bare), in order,
// continuation lines joined, each prefixed with the variable assignments
// (NAME=value lines) seen before it on the page, and the printf lines that
// write the input files of the next ones. Other lines (other programs,
// comments, output such as "netaware: ...") are not examples.
func docExamples(md string) []example {
	var out []example
	block, shell, loop := false, false, 0
	var pending, vars string
	for _, raw := range strings.Split(md, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") {
			block = !block
			shell = block && (line == "```" || line == "```sh" || line == "```bash" || line == "```shell")
			pending, loop = "", 0
			continue
		}
		if !shell {
			continue
		}
		// A loop is a recipe that repeats a measurement (20 runs of a
		// figure), not an example: its commands appear once outside it.
		if strings.HasPrefix(line, "for ") || strings.HasPrefix(line, "while ") {
			loop++
		}
		if loop > 0 {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "done" {
				loop--
			}
			continue
		}
		if pending != "" {
			line = pending + " " + line
			pending = ""
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSpace(strings.TrimSuffix(line, `\`))
			continue
		}
		if assignment.MatchString(line) {
			vars += line + "; "
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "netaware" && !strings.HasSuffix(f[1], ":") && !synopsis(line) || f[0] == "printf") {
			out = append(out, example{line: vars + line})
		}
	}
	return out
}

var leadingVars = regexp.MustCompile(`^((export )?[A-Z_][A-Z0-9_]*=\S+; )+`)

var assignment = regexp.MustCompile(`^(export )?[A-Z_][A-Z0-9_]*=\S+$`)

// synopsis reports whether a line shows a command's form rather than a
// command to run: placeholders (PLATFORM, [--json], a|b), or a listing
// that describes each command after a column gap.
func synopsis(line string) bool {
	code, _, _ := strings.Cut(line, "#")
	switch {
	case placeholder.MatchString(code), strings.ContainsAny(code, "[]"), strings.Contains(code, "|") && !strings.Contains(code, "| "):
		return true
	}
	// "netaware probe rtt        Shirai's ping-pong RTT ...": a gap of
	// several spaces followed by words that are not a comment.
	return regexp.MustCompile(`\S {2,}[^ #-]`).MatchString(code)
}

var placeholder = regexp.MustCompile(`(^|[ =])[A-Z]{2,}([ ]|$)`)

// TestDocsExamplesFinish runs the netaware commands of every docs page's
// sh blocks in order, each page in a directory of its own holding the
// --help examples' fixtures, and checks each finishes within 2 minutes and
// exits 0. Opt-in with the other examples (NETAWARE_EXAMPLES=1).
func TestDocsExamplesFinish(t *testing.T) {
	if os.Getenv("NETAWARE_EXAMPLES") == "" {
		t.Skip("set NETAWARE_EXAMPLES=1 to run every docs example")
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs pages: %v", err)
	}
	bin := buildNetaware(t)
	fixtures := t.TempDir()
	exampleFixtures(t, bin, fixtures)
	ran := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		exs := docExamples(string(b))
		if len(exs) == 0 {
			continue
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			dir := t.TempDir()
			if err := exec.Command("sh", "-c", "cp -r '"+fixtures+"'/. '"+dir+"'").Run(); err != nil {
				t.Fatal(err)
			}
			// The docs name files of the repository (emu/testdata/...,
			// platform/testdata/...) as seen from its root.
			root, err := filepath.Abs("../..")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{"emu", "platform", "modelcheck", "scripts", "tools", "probe", "cluster", "coll", "docs"} {
				if err := os.Symlink(filepath.Join(root, d), filepath.Join(dir, d)); err != nil && !os.IsExist(err) {
					t.Fatal(err)
				}
			}
			for _, e := range exs {
				if why := skipReason(e.line); why != "" {
					t.Logf("skip %s: %s", e.line, why)
					continue
				}
				ran++
				runExample(t, bin, dir, e)
			}
		})
	}
	if ran < 20 {
		t.Errorf("only %d docs examples ran; the parser misses some", ran)
	}
}

func TestDocExamplesParse(t *testing.T) {
	md := "text\n```sh\nnetaware a \\\n  --b c   # why\necho not ours\nfor i in 1 2; do\n  netaware loop $i\ndone\n```\n```\nnetaware: an error shown\nnetaware discover: a notice\n```\n```json\nnetaware x\n```\n```bash\nALG=b,c\nX=1 mpiexec ./app\nnetaware d $ALG\n```\n```\nprintf ',a\\na,\\n' > m.csv\n```\n```\nnetaware probe rtt     RTT of every pair (seed 002)\nnetaware topo show FILE [--json]\nnetaware report DIR\nnetaware topo convert IN --from lgate|slurm\n```\n"
	got := docExamples(md)
	if len(got) != 3 || got[0].line != "netaware a --b c   # why" || got[1].line != "ALG=b,c; netaware d $ALG" || got[2].line != `ALG=b,c; printf ',a\na,\n' > m.csv` {
		t.Errorf("docExamples = %+v", got)
	}
}
