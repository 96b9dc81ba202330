// Command netaware discovers how a set of processes is connected, models its
// communication performance, and tunes collective operations for it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Exit codes: 0 success, 1 the command failed, 2 the command line was wrong,
// 128+N stopped by signal N (130 for SIGINT, 143 for SIGTERM), as shells
// report it.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// stopWithin bounds the time between the first SIGINT/SIGTERM and the exit:
// every command stops through its context long before, and keeps what it
// finished; this is the backstop for a computation that misses the context.
const stopWithin = 1500 * time.Millisecond

// stopsItself is set by commands that bound their own shutdown after an
// interrupt (launch waits --grace for its ranks, then kills them), so that
// the backstop does not orphan their children.
var stopsItself atomic.Bool

// signalError is the cause of the context of a command stopped by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "interrupted by " + signalName(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := (<-sigs).(syscall.Signal)
		cancel(&signalError{sig})
		var backstop <-chan time.Time
		if !stopsItself.Load() {
			backstop = time.After(stopWithin)
		}
		select {
		case again := <-sigs:
			fmt.Fprintf(os.Stderr, "netaware: %s again: exiting now\n", signalName(again.(syscall.Signal)))
		case <-backstop:
			fmt.Fprintf(os.Stderr, "netaware: %s: the command did not stop within %v; exiting without it\n", signalName(sig), stopWithin)
		}
		os.Exit(128 + int(sig))
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// run executes the command line args and returns the process's exit code.
// A context cancelled with a *signalError cause makes it 128+signal.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, prefixed(err)) // a failure of its own, not the interrupt
		}
		fmt.Fprintf(stderr, "netaware: %v\n", se)
		return 128 + int(se.sig)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, prefixed(err))
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

// prefixed is the error's line for stderr; most errors already start with
// the command's path.
func prefixed(err error) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, "netaware") {
		msg = "netaware: " + msg
	}
	return msg
}
