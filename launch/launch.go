// Package launch starts the ranks of a TCP world: N processes of any
// command on this machine, or on the hosts of a hostfile through a remote
// shell (ssh by default). It gives every rank its environment (rank, world
// size, coordinator address, shared token), forwards their output line by
// line (with a rank prefix once two ranks print, see PrefixAuto), and
// watches them: when a rank fails, the others
// are stopped (SIGTERM, then SIGKILL after a grace period) and the failure
// is reported naming that rank. An interrupt (Ctrl-C) is forwarded to
// every rank.
package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"netaware/comm/tcp"
)

// Spec describes a launch.
type Spec struct {
	N       int      // number of ranks
	Command string   // program; "netaware" means this binary (os.Executable)
	Args    []string // its arguments
	// Hosts, when set, places ranks by slot on these hosts and starts each
	// through Rsh; otherwise every rank runs on this machine.
	Hosts []Host
	// Rsh is the remote-shell command, split on spaces, called as
	// Rsh... HOST 'COMMAND LINE' (default "ssh", like Open MPI's plm_rsh_agent).
	Rsh string
	// Coordinator is rank 0's host:port; empty chooses one: a free port on
	// 127.0.0.1 locally, or on the first host of the hostfile.
	Coordinator string
	// Token is the shared secret; empty uses $NETAWARE_TOKEN or a fresh one.
	Token string
	// Env is added to every rank's environment (KEY=VALUE).
	Env []string
	// Stdout and Stderr receive the ranks' output, whole lines at a time.
	Stdout, Stderr io.Writer
	// StdoutPrefix and StderrPrefix say when a line gets its rank's prefix
	// "[rank] " on that stream (default PrefixAuto).
	StdoutPrefix, StderrPrefix PrefixMode
	// Grace is how long stopped ranks get between SIGTERM (or the
	// forwarded SIGINT) and SIGKILL (default 5 s).
	Grace time.Duration
	// Started, if set, is called with each rank's process id once it runs
	// (for a remote rank, the id of its remote-shell process).
	Started func(rank, pid int)
	// Wrap, if set, gives the command line that a local rank's command is
	// appended to, e.g. nsenter into that rank's network namespace.
	Wrap func(rank int) []string
	// Output, if set, gives each rank's own stdout and stderr writers,
	// replacing the prefixed Stdout and Stderr.
	Output func(rank int) (stdout, stderr io.Writer)
}

// PrefixMode says which forwarded lines carry their rank's "[rank] ".
type PrefixMode int

const (
	// PrefixAuto forwards lines untouched while a single rank has written
	// to the stream, so that the output of a command only rank 0 prints
	// (a JSON document, a table) reads as if run alone; from the first
	// line of a second rank on, every line of the stream carries its rank.
	// Lines stream as they come: none is held back.
	PrefixAuto PrefixMode = iota
	// PrefixAlways prefixes every line.
	PrefixAlways
	// PrefixNever forwards every line untouched.
	PrefixNever
)

// ParsePrefixMode parses "auto", "always" or "never".
func ParsePrefixMode(s string) (PrefixMode, error) {
	switch s {
	case "auto":
		return PrefixAuto, nil
	case "always":
		return PrefixAlways, nil
	case "never":
		return PrefixNever, nil
	}
	return 0, fmt.Errorf("prefix mode %q: want auto, always or never", s)
}

// RankError reports the rank whose failure ended the launch.
type RankError struct {
	Rank   int
	Err    error
	Others int // ranks that failed after it (usually brought down by it)
}

func (e *RankError) Error() string {
	s := fmt.Sprintf("rank %d failed: %v", e.Rank, e.Err)
	if e.Others > 0 {
		s += fmt.Sprintf(" (%d other rank(s) failed after it)", e.Others)
	}
	return s
}
func (e *RankError) Unwrap() error { return e.Err }

// NewToken returns a fresh random secret (128 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// FreePort returns host:port with a port that was free on host a moment
// ago (there is a small window in which another program may take it).
func FreePort(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

type proc struct {
	rank   int
	cmd    *exec.Cmd
	exited bool // owned by supervise
	out    *prefixWriter
	errw   *prefixWriter
}

type result struct {
	rank int
	err  error
}

// Defaults of a Spec's zero fields.
const (
	DefaultGrace = 5 * time.Second
	DefaultRsh   = "ssh"
)

// Run starts the ranks and waits for all of them. It returns nil when every
// rank exited with status 0, a *RankError naming the first rank that
// failed, or an error wrapping ctx.Err() after an interrupt.
func Run(ctx context.Context, s Spec) error {
	if s.N < 1 {
		return fmt.Errorf("%d ranks: want at least 1", s.N)
	}
	if s.Command == "" {
		return errors.New("no command")
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.Stdout == nil {
		s.Stdout = os.Stdout
	}
	if s.Stderr == nil {
		s.Stderr = os.Stderr
	}
	if s.Rsh == "" {
		s.Rsh = DefaultRsh
	}
	if s.Token == "" {
		s.Token = os.Getenv(tcp.EnvToken)
	}
	if s.Token == "" {
		t, err := NewToken()
		if err != nil {
			return err
		}
		s.Token = t
	}
	command := s.Command
	if command == "netaware" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("locating this binary: %w", err)
		}
		command = self
	}
	var placement []string
	if len(s.Hosts) > 0 {
		var err error
		if placement, err = Place(s.Hosts, s.N); err != nil {
			return err
		}
	}
	if s.Coordinator == "" {
		var err error
		if s.Coordinator, err = chooseCoordinator(placement); err != nil {
			return fmt.Errorf("choosing a coordinator address: %w", err)
		}
	}
	stdout := &stream{w: s.Stdout, mode: s.StdoutPrefix, first: -1}
	stderr := &stream{w: s.Stderr, mode: s.StderrPrefix, first: -1}
	procs := make([]*proc, s.N)
	for r := 0; r < s.N; r++ {
		p := &proc{
			rank: r,
			out:  &prefixWriter{s: stdout, rank: r},
			errw: &prefixWriter{s: stderr, rank: r},
		}
		vars := []string{
			tcp.EnvRank + "=" + strconv.Itoa(r),
			tcp.EnvSize + "=" + strconv.Itoa(s.N),
			tcp.EnvCoordinator + "=" + s.Coordinator,
		}
		vars = append(vars, s.Env...)
		if placement == nil {
			argv := append([]string{command}, s.Args...)
			if s.Wrap != nil {
				argv = append(append([]string(nil), s.Wrap(r)...), argv...)
			}
			p.cmd = exec.Command(argv[0], argv[1:]...)
			p.cmd.Env = append(append(os.Environ(), vars...), tcp.EnvToken+"="+s.Token)
		} else {
			rsh := strings.Fields(s.Rsh)
			if len(rsh) == 0 {
				return errors.New("empty remote-shell command")
			}
			line := remoteLine(command, s.Args, vars)
			p.cmd = exec.Command(rsh[0], append(rsh[1:], placement[r], line)...)
			// The token goes through the remote shell's stdin, not its
			// command line, so that it never shows in a process list.
			p.cmd.Stdin = strings.NewReader(s.Token + "\n")
		}
		p.cmd.Stdout = p.out
		p.cmd.Stderr = p.errw
		if s.Output != nil {
			p.cmd.Stdout, p.cmd.Stderr = s.Output(r)
		}
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		p.cmd.WaitDelay = s.Grace
		procs[r] = p
	}
	results := make(chan result, s.N)
	started := 0
	for _, p := range procs {
		if err := p.cmd.Start(); err != nil {
			signalAll(procs[:started], syscall.SIGKILL)
			for range started {
				<-results
			}
			return &RankError{Rank: p.rank, Err: fmt.Errorf("start %s: %w", p.cmd.Path, err)}
		}
		started++
		if s.Started != nil {
			s.Started(p.rank, p.cmd.Process.Pid)
		}
		go func(p *proc) {
			err := p.cmd.Wait()
			p.out.Flush()
			p.errw.Flush()
			results <- result{p.rank, err}
		}(p)
	}
	return supervise(ctx, procs, results, s.Grace)
}

// settle is how long supervise waits after a first failure before it
// stops the other ranks: long enough for the rank whose death caused the
// others to fail to be reaped too, so that the report names the cause.
const settle = 250 * time.Millisecond

// supervise waits for every rank, stopping the others at the first failure
// or interrupt. Of the ranks that fail before the others are stopped, it
// blames one killed by a signal (the others usually exit with an error that
// names it), or else the earliest.
func supervise(ctx context.Context, procs []*proc, results <-chan result, grace time.Duration) error {
	var first *RankError
	firstSignaled := false
	others := 0
	interrupted := false
	stopped := false
	var stop, kill <-chan time.Time
	ctxDone := ctx.Done()
	for remaining := len(procs); remaining > 0; {
		select {
		case res := <-results:
			remaining--
			procs[res.rank].exited = true
			if res.err == nil || interrupted {
				continue
			}
			if stopped {
				others++
				continue
			}
			sig := killedBySignal(res.err)
			switch {
			case first == nil:
				first, firstSignaled = &RankError{Rank: res.rank, Err: res.err}, sig
				stop = time.After(settle)
			case sig && !firstSignaled:
				first, firstSignaled = &RankError{Rank: res.rank, Err: res.err}, sig
				others++
			default:
				others++
			}
		case <-stop:
			stop = nil
			stopped = true
			signalAll(procs, syscall.SIGTERM)
			kill = time.After(grace)
		case <-ctxDone:
			ctxDone = nil
			interrupted = true
			if !stopped {
				stopped = true
				stop = nil
				signalAll(procs, syscall.SIGINT)
				kill = time.After(grace)
			}
		case <-kill:
			kill = nil
			signalAll(procs, syscall.SIGKILL)
		}
	}
	if first != nil {
		first.Others = others
		return first
	}
	if interrupted {
		return fmt.Errorf("launch interrupted: %w", ctx.Err())
	}
	return nil
}

func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// signalAll signals the process group of every rank still running.
func signalAll(procs []*proc, sig syscall.Signal) {
	for _, p := range procs {
		if !p.exited && p.cmd.Process != nil {
			syscall.Kill(-p.cmd.Process.Pid, sig)
		}
	}
}

// chooseCoordinator picks rank 0's address: a free loopback port when every
// rank is local, the first host (where rank 0 runs) otherwise.
func chooseCoordinator(placement []string) (string, error) {
	if placement == nil || isLoopbackName(placement[0]) {
		host := "127.0.0.1"
		if placement != nil {
			host = placement[0]
		}
		return FreePort(host)
	}
	// A remote port cannot be probed from here; pick one at random from a
	// range rarely used by services (override with --coordinator).
	n, err := rand.Int(rand.Reader, big.NewInt(20000))
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(placement[0], strconv.Itoa(30000+int(n.Int64()))), nil
}

func isLoopbackName(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// remoteLine is the command line the remote shell runs: read the token
// from stdin, go to the launch directory if it exists there, and exec the
// rank with its environment.
func remoteLine(command string, args, vars []string) string {
	var b strings.Builder
	b.WriteString("IFS= read -r " + tcp.EnvToken + " && export " + tcp.EnvToken + " && ")
	if wd, err := os.Getwd(); err == nil {
		b.WriteString("{ cd " + shellQuote(wd) + " 2>/dev/null || true; } && ")
	}
	b.WriteString("exec env")
	for _, v := range vars {
		b.WriteString(" " + shellQuote(v))
	}
	b.WriteString(" " + shellQuote(command))
	for _, a := range args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stream is one output (stdout or stderr) shared by every rank.
type stream struct {
	mu        sync.Mutex
	w         io.Writer
	mode      PrefixMode
	first     int  // PrefixAuto: the first rank that wrote, -1 before
	prefixing bool // PrefixAuto: a second rank has written
}

// write forwards whole lines of rank, prefixed or not as the mode says.
func (s *stream) write(rank int, lines []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := s.mode == PrefixAlways
	if s.mode == PrefixAuto {
		if s.first < 0 {
			s.first = rank
		}
		s.prefixing = s.prefixing || rank != s.first
		prefix = s.prefixing
	}
	if !prefix {
		_, err := s.w.Write(lines)
		return err
	}
	tag := "[" + strconv.Itoa(rank) + "] "
	var out []byte
	for len(lines) > 0 {
		i := indexNewline(lines)
		out = append(append(out, tag...), lines[:i+1]...)
		lines = lines[i+1:]
	}
	_, err := s.w.Write(out)
	return err
}

// prefixWriter forwards a rank's output to its stream in whole lines, so
// that lines of different ranks never interleave mid-line.
type prefixWriter struct {
	s       *stream
	rank    int
	partial []byte
}

// LineWriter is an io.Writer whose Flush writes a last unterminated line.
type LineWriter interface {
	io.Writer
	Flush()
}

// Output is one stream (stdout or stderr) shared by the ranks of a run,
// prefixed as Run prints ranks' output.
type Output struct{ s *stream }

// NewOutput returns a shared output writing to w, lines prefixed with
// "[rank] " as mode says.
func NewOutput(w io.Writer, mode PrefixMode) *Output {
	return &Output{s: &stream{w: w, mode: mode, first: -1}}
}

// Rank returns rank's writer: it forwards whole lines, so that lines of
// different ranks never interleave mid-line.
func (o *Output) Rank(rank int) LineWriter { return &prefixWriter{s: o.s, rank: rank} }

// maxLine bounds a line held back waiting for its newline.
const maxLine = 64 << 10

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	var out []byte
	for {
		i := indexNewline(p.partial)
		if i < 0 {
			if len(p.partial) < maxLine {
				break
			}
			i = len(p.partial) - 1 // flush an overlong line in pieces
		}
		out = append(out, p.partial[:i+1]...)
		if p.partial[i] != '\n' {
			out = append(out, '\n')
		}
		p.partial = p.partial[i+1:]
	}
	if len(out) > 0 {
		if err := p.s.write(p.rank, out); err != nil {
			return 0, err
		}
	}
	if len(p.partial) == 0 {
		p.partial = nil
	}
	return len(b), nil
}

// Flush writes a last line that had no newline.
func (p *prefixWriter) Flush() {
	if len(p.partial) > 0 {
		p.Write([]byte{'\n'})
	}
}

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}
