package emu

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"netaware/internal/atomicfile"
	"netaware/platform"
)

// Cluster is a built (or recorded) emulated cluster.
type Cluster struct {
	*Plan
	// State is "building" while Up runs (or when it died half-way) and
	// "up" once every step succeeded.
	State string `json:"state"`
}

// ErrNotRoot is returned where building or removing a cluster needs root.
var ErrNotRoot = errors.New("netaware emu needs root (it creates network namespaces, bridges and traffic-control rules); run it as root or with sudo")

// ErrUnsupported is wrapped by the errors of a machine that cannot build
// clusters: root without the right to create namespaces (a restricted
// container), or a kernel without tbf.
var ErrUnsupported = errors.New("this machine cannot build emulated clusters")

// netnsDir is where ip netns keeps its namespace files.
const netnsDir = "/run/netns"

// Tools are the programs emu runs; Check tells which are missing.
var Tools = []string{"ip", "tc", "unshare", "nsenter"}

// Check verifies that this process can build clusters: root and the tools.
func Check() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	var missing []string
	for _, t := range Tools {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: netaware emu needs %s in PATH (iproute2 and util-linux)", ErrUnsupported, strings.Join(missing, ", "))
	}
	if out, err := exec.Command("unshare", "--net", "--uts", "true").CombinedOutput(); err != nil {
		return fmt.Errorf("%w: cannot create network namespaces here: %s", ErrUnsupported, strings.TrimSpace(string(out)))
	}
	return nil
}

func statePath(stateDir, prefix string) string {
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	return filepath.Join(stateDir, prefix+".json")
}

// Up builds the network of plat. It refuses a prefix that is in use; when a
// step fails it removes everything built so far and returns the step's
// error. progress, if not nil, is called after each step.
func Up(ctx context.Context, plat *platform.Platform, opt Options, progress func(done, total int)) (*Cluster, error) {
	if err := ValidPrefix(opt.Prefix); err != nil {
		return nil, err
	}
	if err := Check(); err != nil {
		return nil, err
	}
	if opt.StateDir == "" {
		opt.StateDir = DefaultStateDir
	}
	if left, err := leftovers(ctx, opt.StateDir, opt.Prefix); err != nil {
		return nil, err
	} else if len(left) > 0 {
		return nil, fmt.Errorf("cluster %s exists (%s); remove it first: netaware emu down %s", opt.Prefix, strings.Join(left, ", "), opt.Prefix)
	}
	netem, err := probeKernel(ctx, opt.Prefix)
	if err != nil {
		return nil, err
	}
	opt.Netem = netem
	others, err := recorded(opt.StateDir)
	if err != nil {
		return nil, err
	}
	for _, c := range others {
		if s, err := netip.ParsePrefix(c.Subnet); err == nil && c.Prefix != opt.Prefix {
			opt.Avoid = append(opt.Avoid, s)
		}
	}
	pl, err := NewPlan(plat, opt)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Plan: pl, State: "building"}
	if err := os.MkdirAll(filepath.Join(opt.StateDir, opt.Prefix, "uts"), 0o755); err != nil {
		return nil, err
	}
	if err := c.save(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Cluster, error) {
		cleanCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if derr := Down(cleanCtx, opt.StateDir, opt.Prefix); derr != nil {
			err = fmt.Errorf("%w; removing the half-built cluster also failed: %v", err, derr)
		}
		return nil, err
	}
	for _, h := range pl.Hosts {
		// unshare --uts=FILE binds the new namespace onto FILE, which must exist.
		if err := os.WriteFile(h.UTS, nil, 0o644); err != nil {
			return fail(err)
		}
	}
	for i, argv := range pl.Steps {
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("building cluster %s: %w", opt.Prefix, err))
		}
		if err := run(ctx, argv); err != nil {
			return fail(fmt.Errorf("building cluster %s: step %d of %d: %w", opt.Prefix, i+1, len(pl.Steps), err))
		}
		if progress != nil {
			progress(i+1, len(pl.Steps))
		}
	}
	c.State = "up"
	if err := c.save(); err != nil {
		return fail(err)
	}
	return c, nil
}

func (c *Cluster) save() error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(statePath(c.StateDir, c.Prefix), append(b, '\n'))
}

// run executes one command, returning its stderr in the error.
func run(ctx context.Context, argv []string) error {
	_, err := output(ctx, argv)
	return err
}

func output(ctx context.Context, argv []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("%s: %s", strings.Join(argv, " "), msg)
	}
	return out, nil
}

// probeKernel checks, on the loopback of a scratch namespace PREFIX-probe,
// that the kernel has tbf (an error wrapping ErrUnsupported otherwise) and
// whether it has netem.
func probeKernel(ctx context.Context, prefix string) (netem bool, err error) {
	ns := prefix + "-probe"
	if err := run(ctx, []string{"ip", "netns", "add", ns}); err != nil {
		return false, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	defer run(context.WithoutCancel(ctx), []string{"ip", "netns", "del", ns})
	if err := run(ctx, []string{"tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1gbit", "burst", "65536", "limit", "131072"}); err != nil {
		return false, fmt.Errorf("%w: no tbf qdisc: %w", ErrUnsupported, err)
	}
	err = run(ctx, []string{"tc", "-n", ns, "qdisc", "replace", "dev", "lo", "root", "netem", "delay", "1ms"})
	return err == nil, nil
}

// Load reads the recorded cluster of prefix.
func Load(stateDir, prefix string) (*Cluster, error) {
	if err := ValidPrefix(prefix); err != nil {
		return nil, err
	}
	p := statePath(stateDir, prefix)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no cluster %s (no %s; see 'netaware emu status')", prefix, p)
	}
	if err != nil {
		return nil, err
	}
	var c Cluster
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if c.Plan == nil || c.Prefix != prefix {
		return nil, fmt.Errorf("%s: not the state of cluster %s", p, prefix)
	}
	return &c, nil
}

// List returns the prefixes of the recorded clusters, sorted.
func List(stateDir string) ([]string, error) {
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	m, err := filepath.Glob(filepath.Join(stateDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range m {
		p := strings.TrimSuffix(filepath.Base(f), ".json")
		if ValidPrefix(p) == nil {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Missing lists the namespaces of the cluster that do not exist (a cluster
// whose namespaces were removed behind emu's back, or a half-built one).
func (c *Cluster) Missing() []string {
	var out []string
	check := func(ns string) {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err != nil {
			out = append(out, ns)
		}
	}
	for _, s := range c.Switches {
		check(s.Namespace)
	}
	for _, h := range c.Hosts {
		check(h.Namespace)
	}
	return out
}

// namespaces lists the network namespaces whose names start with PREFIX-.
func namespaces(prefix string) ([]string, error) {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix+"-") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// rootLinks lists interfaces of this namespace named like a cluster's veth
// ends (PREFIXp7, PREFIXt2a): only a step that failed between creating a
// pair and moving it leaves one here.
func rootLinks(ctx context.Context, prefix string) ([]string, error) {
	out, err := output(ctx, []string{"ip", "-o", "link", "show"})
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `(p[0-9]+|t[0-9]+[ab])$`)
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "7: ne1p3@if8: <...>"
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if re.MatchString(name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// utsMounts lists the UTS namespace files of prefix that are mounted.
func utsMounts(stateDir, prefix string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(stateDir, prefix, "uts") + "/"
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir) {
			out = append(out, f[4])
		}
	}
	return out, nil
}

// leftovers names whatever exists of cluster prefix.
func leftovers(ctx context.Context, stateDir, prefix string) ([]string, error) {
	var left []string
	if _, err := os.Stat(statePath(stateDir, prefix)); err == nil {
		left = append(left, statePath(stateDir, prefix))
	}
	ns, err := namespaces(prefix)
	if err != nil {
		return nil, err
	}
	if len(ns) > 0 {
		left = append(left, fmt.Sprintf("%d namespace(s) %s-*", len(ns), prefix))
	}
	links, err := rootLinks(ctx, prefix)
	if err != nil {
		return nil, err
	}
	left = append(left, links...)
	m, err := utsMounts(stateDir, prefix)
	if err != nil {
		return nil, err
	}
	if len(m) > 0 {
		left = append(left, fmt.Sprintf("%d UTS namespace mount(s)", len(m)))
	}
	return left, nil
}

// Down removes cluster prefix: it kills the processes in its namespaces,
// deletes the namespaces (which takes their veths and bridges along), any
// veth end left in this namespace, the UTS namespace mounts and the state.
// It works from the names alone, so also after a crash or a half-built Up;
// removing a cluster that does not exist is not an error.
func Down(ctx context.Context, stateDir, prefix string) error {
	if err := ValidPrefix(prefix); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	var errs []error
	nss, err := namespaces(prefix)
	if err != nil {
		errs = append(errs, err)
	}
	var pids []int
	for _, ns := range nss {
		out, err := output(ctx, []string{"ip", "netns", "pids", ns})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				pids = append(pids, pid)
			}
		}
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitGone(ctx, pids)
	for _, ns := range nss {
		if err := run(ctx, []string{"ip", "netns", "del", ns}); err != nil {
			errs = append(errs, err)
		}
	}
	links, err := rootLinks(ctx, prefix)
	if err != nil {
		errs = append(errs, err)
	}
	for _, l := range links {
		// Deleting one end of a pair deletes its peer too.
		if err := run(ctx, []string{"ip", "link", "del", l}); err != nil && run(ctx, []string{"ip", "link", "show", l}) == nil {
			errs = append(errs, err)
		}
	}
	mounts, err := utsMounts(stateDir, prefix)
	if err != nil {
		errs = append(errs, err)
	}
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("umount %s: %w", m, err))
		}
	}
	if len(errs) == 0 {
		if err := os.RemoveAll(filepath.Join(stateDir, prefix)); err != nil {
			errs = append(errs, err)
		}
		if err := os.Remove(statePath(stateDir, prefix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing cluster %s: %w", prefix, errors.Join(errs...))
	}
	return nil
}

// waitGone waits (up to 2 s) until the killed processes have disappeared,
// so that their sockets do not hold the namespaces' devices.
func waitGone(ctx context.Context, pids []int) {
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) || zombie(pid) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Enter is the argv prefix that runs a command inside host i's network
// and UTS namespaces.
func (c *Cluster) Enter(i int) []string {
	h := c.Hosts[i]
	return []string{"nsenter", "--net=" + filepath.Join(netnsDir, h.Namespace), "--uts=" + h.UTS, "--"}
}

// zombie tells whether pid has exited and waits for its parent to reap it.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
