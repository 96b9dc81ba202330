package comm

import (
	"os"
	"strconv"
	"strings"
)

// LocalIdentity reads this process's host name, pid, and the CPU core and
// socket it last ran on (Linux /proc and /sys; -1 where unavailable). The
// core is a hint: the OS may move the process unless it is pinned.
func LocalIdentity(rank int) Identity {
	host, _ := os.Hostname()
	id := Identity{Rank: rank, Host: host, Machine: machine(), PID: os.Getpid(), Core: -1, Socket: -1}
	if cpu, ok := currentCPU(); ok {
		id.Core = cpu
		id.Socket = socketOf(cpu)
	}
	return id
}

// machine is the kernel's boot id and this process's network namespace,
// "" where neither can be read.
func machine() string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	netns, _ := os.Readlink("/proc/self/ns/net")
	if len(boot) == 0 && netns == "" {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + netns
}

// currentCPU returns field 39 ("processor") of /proc/self/stat.
func currentCPU() (int, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	return parseStatCPU(string(b))
}

func parseStatCPU(stat string) (int, bool) {
	// The command name (field 2) is in parentheses and may contain spaces;
	// fields are counted after its closing parenthesis.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	const processorField = 39 - 3 // fields 3.. follow the ')'
	if len(f) <= processorField {
		return 0, false
	}
	n, err := strconv.Atoi(f[processorField])
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func socketOf(cpu int) int {
	b, err := os.ReadFile("/sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/topology/physical_package_id")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}
