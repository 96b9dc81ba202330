package emu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"netaware/internal/atomicfile"
	"netaware/launch"
)

// DefaultGrace is how long stopped ranks get between SIGINT/SIGTERM and
// SIGKILL: everything is gone within 2 s of an interrupt.
const DefaultGrace = 1500 * time.Millisecond

// RunOptions tune Cluster.Run.
type RunOptions struct {
	// OutDir, if set, receives every rank's output as R.out and R.err
	// (created if needed); otherwise a temporary directory is used and
	// removed afterwards.
	OutDir string
	// Stdout and Stderr receive the ranks' output once they have finished:
	// unprefixed when at most one rank wrote anything, otherwise every
	// line prefixed "[rank] " (nil: discard).
	Stdout, Stderr io.Writer
	// Live prints every line to Stdout or Stderr as it comes, always
	// prefixed "[rank] " (which ranks will write is not known yet), instead
	// of at the end.
	Live bool
	// Token is NETAWARE_TOKEN (empty: $NETAWARE_TOKEN, or a fresh one).
	Token string
	// Port is the coordinator's port on rank 0's host (0: random in
	// 30000-49999; the host's namespace runs nothing else).
	Port int
	// Env is added to every rank's environment (KEY=VALUE).
	Env []string
	// Timeout stops the ranks after this long (0: none).
	Timeout time.Duration
	// Grace is the time between the stop signal and SIGKILL (default DefaultGrace).
	Grace time.Duration
	// Started, if set, is called with each rank's process id.
	Started func(rank, pid int)
}

// ErrTimeout is wrapped by Run's error when RunOptions.Timeout expired.
var ErrTimeout = errors.New("timed out")

// Run starts argv once per rank, inside the namespaces of the rank's host,
// as one TCP world (NETAWARE_RANK, NETAWARE_SIZE, NETAWARE_COORDINATOR at
// rank 0's address, NETAWARE_TOKEN), and waits for every rank. argv[0]
// "netaware" means this very binary (in a test, the test binary: build
// netaware and give its path). When a rank fails the others are
// stopped, and the error (a *launch.RankError) names the rank; cancelling
// ctx stops every rank (SIGINT, then SIGKILL after the grace time).
func (c *Cluster) Run(ctx context.Context, argv []string, o RunOptions) error {
	if len(argv) == 0 {
		return errors.New("no command")
	}
	if len(c.Ranks) == 0 {
		return fmt.Errorf("cluster %s has no ranks", c.Prefix)
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	port := o.Port
	if port == 0 {
		port = 30000 + rand.IntN(20000)
	}
	dir := o.OutDir
	if dir == "" {
		d, err := os.MkdirTemp("", "netaware-emu-run-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := len(c.Ranks)
	files := make([]*os.File, 0, 2*n)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	outs := make([][2]io.Writer, n)
	var live []launch.LineWriter
	var liveOut [2]*launch.Output
	for k, w := range []io.Writer{o.Stdout, o.Stderr} {
		if o.Live && w != nil {
			liveOut[k] = launch.NewOutput(w, launch.PrefixAlways)
		}
	}
	for r := range n {
		for k, ext := range []string{".out", ".err"} {
			f, err := atomicfile.Create(filepath.Join(dir, strconv.Itoa(r)+ext))
			if err != nil {
				return err
			}
			files = append(files, f)
			outs[r][k] = f
			if liveOut[k] != nil {
				lw := liveOut[k].Rank(r)
				live = append(live, lw)
				outs[r][k] = io.MultiWriter(f, lw)
			}
		}
	}
	runCtx := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, o.Timeout, ErrTimeout)
		defer cancel()
	}
	spec := launch.Spec{
		N:           n,
		Command:     argv[0],
		Args:        argv[1:],
		Coordinator: net.JoinHostPort(c.Hosts[c.Ranks[0]].Address, strconv.Itoa(port)),
		Token:       o.Token,
		Env:         o.Env,
		Grace:       o.Grace,
		Started:     o.Started,
		Wrap:        func(r int) []string { return c.Enter(c.Ranks[r]) },
		Output:      func(r int) (io.Writer, io.Writer) { return outs[r][0], outs[r][1] },
	}
	err := launch.Run(runCtx, spec)
	if context.Cause(runCtx) == ErrTimeout && ctx.Err() == nil {
		err = fmt.Errorf("%w after %v: %w", ErrTimeout, o.Timeout, err)
	}
	for _, lw := range live {
		lw.Flush()
	}
	if !o.Live {
		if perr := printOutputs(dir, n, o.Stdout, o.Stderr); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

// printOutputs copies the ranks' output files to stdout and stderr, with
// rank prefixes only when more than one rank wrote something.
func printOutputs(dir string, n int, stdout, stderr io.Writer) error {
	writers := 0
	for r := range n {
		for _, ext := range []string{".out", ".err"} {
			if st, err := os.Stat(filepath.Join(dir, strconv.Itoa(r)+ext)); err == nil && st.Size() > 0 {
				writers++
				break
			}
		}
	}
	for k, w := range []io.Writer{stdout, stderr} {
		if w == nil {
			continue
		}
		ext := []string{".out", ".err"}[k]
		for r := range n {
			prefix := ""
			if writers > 1 {
				prefix = "[" + strconv.Itoa(r) + "] "
			}
			if err := copyLines(w, filepath.Join(dir, strconv.Itoa(r)+ext), prefix); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyLines(w io.Writer, path, prefix string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	bw := bufio.NewWriter(w)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			bw.WriteString(prefix)
			bw.WriteString(line)
			if line[len(line)-1] != '\n' {
				bw.WriteByte('\n')
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Command returns a command that runs argv in host i's namespaces, with
// its own host name; cancelling ctx sends SIGTERM, then SIGKILL after
// DefaultGrace. The caller sets its input and output.
func (c *Cluster) Command(ctx context.Context, i int, argv ...string) *exec.Cmd {
	full := append(c.Enter(i), argv...)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = DefaultGrace
	return cmd
}
