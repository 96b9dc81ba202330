package order

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"netaware/topo"
)

// localTopology is n ranks on this machine's host name under one switch,
// the only placement a one-machine test can launch.
func localTopology(t *testing.T, n int) (*topo.Topology, string) {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Skipf("no host name: %v", err)
	}
	hosts := make([]string, n)
	sw := make([]int, n)
	for i := range hosts {
		hosts[i] = host
	}
	return star(t, hosts, sw), host
}

// openMPI returns Open MPI's mpirun or skips.
func openMPI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	for _, name := range []string{"mpirun.openmpi", "mpirun"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		out, _ := exec.Command(p, "--version").CombinedOutput()
		if strings.Contains(string(out), "Open MPI") {
			return p
		}
	}
	t.Skip("Open MPI's mpirun not found (Debian/Ubuntu: apt-get install openmpi-bin): cannot check the rankfile")
	return ""
}

// landing is where one rank of an mpirun job ran: its host, the logical
// core mpirun reports binding it to, and the CPUs the kernel let it use.
type landing struct {
	host string
	core int
	cpus []int
}

var bindingRE = regexp.MustCompile(`MCW rank (\d+) bound to .*?core (\d+)\[`)

// runRankfile starts n copies of a shell under mpirun with the rankfile and
// returns where each rank landed, by rank. The shell prints its rank, host
// and the Cpus_allowed_list of /proc/self/status, which the kernel sets
// from the binding, so the check does not rest on mpirun's word alone.
func runRankfile(t *testing.T, mpirun, rankfile string, n int) map[int]landing {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, "--rankfile", rankfile, "-n", strconv.Itoa(n), "--report-bindings",
		"sh", "-c", `echo "RANK $OMPI_COMM_WORLD_RANK $(hostname) $(grep Cpus_allowed_list /proc/self/status | cut -f2)"`)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun --rankfile: %v\n%s", err, out)
	}
	got := map[int]landing{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := bindingRE.FindStringSubmatch(line); m != nil {
			r, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			l := got[r]
			l.core = c + 1 // +1 so that 0 means "not reported"
			got[r] = l
			continue
		}
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "RANK" {
			r, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("bad line %q", line)
			}
			cpus, err := topo.ParseRanks(f[3]) // the kernel's list syntax: 0-3,8
			if err != nil {
				t.Fatalf("Cpus_allowed_list %q: %v", f[3], err)
			}
			l := got[r]
			l.host, l.cpus = f[2], cpus
			got[r] = l
		}
	}
	for r, l := range got {
		if l.core == 0 || l.host == "" {
			t.Fatalf("rank %d: binding or output missing:\n%s", r, out)
		}
		l.core--
		got[r] = l
	}
	if len(got) != n {
		t.Fatalf("%d ranks reported, want %d:\n%s", len(got), n, out)
	}
	return got
}

// coreCPUs lists the CPUs of each core, cores numbered as hwloc numbers
// them logically on ordinary machines: by their lowest CPU number.
func coreCPUs(t *testing.T) [][]int {
	t.Helper()
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skipf("no /sys/devices/system/cpu/online: %v", err)
	}
	cpus, err := topo.ParseRanks(strings.TrimSpace(string(online)))
	if err != nil {
		t.Fatal(err)
	}
	byCore := map[string][]int{}
	for _, c := range cpus {
		read := func(f string) string {
			b, err := os.ReadFile(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/%s", c, f))
			if err != nil {
				t.Skipf("cpu topology unreadable: %v", err)
			}
			return strings.TrimSpace(string(b))
		}
		k := read("physical_package_id") + "/" + read("core_id")
		byCore[k] = append(byCore[k], c)
	}
	var out [][]int
	for _, v := range byCore {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// TestOpenMPIAcceptsRankfile: Open MPI's mpirun reads the rankfile netaware
// writes, and every rank runs on the host and core the file gives it, as
// the kernel's affinity mask shows. A hand-written rankfile that reverses
// the cores shows the check sees where ranks really land.
func TestOpenMPIAcceptsRankfile(t *testing.T) {
	mpirun := openMPI(t)
	cores := coreCPUs(t)
	n := min(4, len(cores), runtime.NumCPU())
	if n < 2 {
		t.Skipf("%d core(s): need two to tell ranks apart by binding", n)
	}
	tp, host := localTopology(t, n)
	p, err := DepthFirst(tp)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b, "ompi-rankfile"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rankfile")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runRankfile(t, mpirun, file, n)
	for _, s := range p.Slots() {
		l := got[s.Rank]
		if l.host != s.Host || l.core != s.Slot || !slices.Equal(l.cpus, cores[s.Slot]) {
			t.Errorf("rank %d ran on %s core %d CPUs %v; the rankfile says %s slot %d (CPUs %v)\n%s",
				s.Rank, l.host, l.core, l.cpus, s.Host, s.Slot, cores[s.Slot], b.String())
		}
	}

	var rev bytes.Buffer
	for r := range n {
		fmt.Fprintf(&rev, "rank %d=%s slot=%d\n", r, host, n-1-r)
	}
	if err := os.WriteFile(file, rev.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got = runRankfile(t, mpirun, file, n)
	for r := range n {
		if l := got[r]; l.core != n-1-r || !slices.Equal(l.cpus, cores[n-1-r]) {
			t.Errorf("reversed rankfile: rank %d on core %d CPUs %v, want core %d", r, l.core, l.cpus, n-1-r)
		}
	}
}

// TestLaunchersAcceptHostfiles: Open MPI's mpirun reads the hostfile and
// MPICH's mpiexec (Hydra) the machinefile, and both read the one-host-a-rank
// file discover writes (the SLURM_HOSTFILE format), starting every rank on
// the host listed. mpirun runs without --oversubscribe, so a file with
// fewer slots than ranks fails.
func TestLaunchersAcceptHostfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun and mpiexec")
	}
	const n = 3
	tp, host := localTopology(t, n)
	p, err := DepthFirst(tp)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format, launcher, rankVar string
		args                      func(file string) []string
	}{
		{"ompi-hostfile", "openmpi", "OMPI_COMM_WORLD_RANK", func(f string) []string { return []string{"--hostfile", f} }},
		{"slurm-hostfile", "openmpi", "OMPI_COMM_WORLD_RANK", func(f string) []string { return []string{"--hostfile", f} }},
		{"machinefile", "hydra", "PMI_RANK", func(f string) []string { return []string{"-f", f} }},
		{"slurm-hostfile", "hydra", "PMI_RANK", func(f string) []string { return []string{"-f", f} }},
	}
	for _, c := range cases {
		t.Run(c.format+"/"+c.launcher, func(t *testing.T) {
			var bin string
			if c.launcher == "openmpi" {
				bin = openMPI(t)
			} else if bin, err = exec.LookPath("mpiexec.hydra"); err != nil {
				t.Skip("MPICH's mpiexec.hydra not found (Debian/Ubuntu: apt-get install mpich): cannot check the machinefile")
			}
			var b bytes.Buffer
			if err := p.Write(&b, c.format); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), FileName(c.format))
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := append(c.args(file), "-n", strconv.Itoa(n), "sh", "-c", `echo "RANK $`+c.rankVar+` $(hostname)"`)
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=false")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s %v: %v\n%s\nfile:\n%s", bin, args, err, out, b.String())
			}
			seen := map[string]bool{}
			for _, line := range strings.Split(string(out), "\n") {
				if f := strings.Fields(line); len(f) == 3 && f[0] == "RANK" {
					if f[2] != host {
						t.Errorf("rank %s ran on %s, want %s", f[1], f[2], host)
					}
					seen[f[1]] = true
				}
			}
			if len(seen) != n {
				t.Errorf("%d ranks reported, want %d:\n%s", len(seen), n, out)
			}
		})
	}
}

// TestCollbenchRuns compiles tools/mpibench/collbench.c, the benchmark of
// scripts/order-proof.sh, and runs both collectives on two local ranks: it
// prints the ranks' hosts, one time a repetition and a result line, and
// checks the collective's result itself.
func TestCollbenchRuns(t *testing.T) {
	mpirun := openMPI(t)
	mpicc, err := exec.LookPath("mpicc")
	if err != nil {
		t.Skip("mpicc not found (Debian/Ubuntu: apt-get install libopenmpi-dev)")
	}
	bin := filepath.Join(t.TempDir(), "collbench")
	if out, err := exec.Command(mpicc, "-O2", "-Wall", "-Werror", "-o", bin, "../tools/mpibench/collbench.c").CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	host, _ := os.Hostname()
	for _, op := range []string{"allreduce", "bcast"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, mpirun, "-n", "2", "--oversubscribe", "--mca", "btl", "self,tcp", bin, op, "65536", "1", "3")
		cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=false")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("collbench %s: %v\n%s", op, err, out)
		}
		s := string(out)
		for _, want := range []string{"hosts " + host + " " + host + "\n", "rep 0 ", "rep 2 ", "result op=" + op + " bytes=65536 ranks=2 reps=3 median_s="} {
			if !strings.Contains(s, want) {
				t.Errorf("collbench %s: output lacks %q:\n%s", op, want, s)
			}
		}
	}
	// A wrong command line is refused, saying why.
	cmd := exec.Command(mpirun, "-n", "1", bin, "alltoall", "64")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=false")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "OP must be allreduce, bcast,") {
		t.Errorf("collbench alltoall: %v\n%s", err, out)
	}
}
