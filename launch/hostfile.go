package launch

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Host is one line of a hostfile: a machine and how many ranks it takes.
type Host struct {
	Name  string
	Slots int
}

// ParseHostfile reads Open MPI's hostfile syntax: one host per line,
// optionally followed by slots=N (default 1) and max_slots=M (accepted,
// and checked against slots); '#' starts a comment. A host listed twice
// adds up its slots. name is used in error messages (file:line).
func ParseHostfile(r io.Reader, name string) ([]Host, error) {
	var hosts []Host
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		h := Host{Name: f[0], Slots: 1}
		if strings.ContainsAny(h.Name, "=\"'`$;&|<>\\") {
			return nil, fmt.Errorf("%s:%d: %q is not a host name", name, line, h.Name)
		}
		maxSlots := -1
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: %q: want key=value (slots=N)", name, line, kv)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<20 {
				return nil, fmt.Errorf("%s:%d: %s=%q: want a positive count", name, line, k, v)
			}
			switch k {
			case "slots", "count", "cpu":
				h.Slots = n
			case "max_slots", "max-slots":
				maxSlots = n
			default:
				return nil, fmt.Errorf("%s:%d: unknown key %q (known: slots, max_slots)", name, line, k)
			}
		}
		if maxSlots >= 0 && h.Slots > maxSlots {
			return nil, fmt.Errorf("%s:%d: slots=%d exceeds max_slots=%d", name, line, h.Slots, maxSlots)
		}
		if i, seen := index[h.Name]; seen {
			hosts[i].Slots += h.Slots
			continue
		}
		index[h.Name] = len(hosts)
		hosts = append(hosts, h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line, err)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: no hosts", name)
	}
	return hosts, nil
}

// Place maps n ranks onto hosts by slot, as Open MPI's default does: the
// first host's slots are filled first, then the next host's. It refuses to
// oversubscribe.
func Place(hosts []Host, n int) ([]string, error) {
	total := 0
	for _, h := range hosts {
		total += h.Slots
	}
	if n > total {
		return nil, fmt.Errorf("%d ranks for %d slots: add hosts or slots to the hostfile", n, total)
	}
	out := make([]string, 0, n)
	for _, h := range hosts {
		for s := 0; s < h.Slots && len(out) < n; s++ {
			out = append(out, h.Name)
		}
	}
	return out, nil
}
