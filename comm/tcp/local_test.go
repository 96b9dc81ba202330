package tcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"netaware/comm"
)

func TestUseLocal(t *testing.T) {
	a := endpointAddr{addr: "10.0.0.1:1", local: "@a", machine: "boot/net:[1]"}
	for _, c := range []struct {
		name string
		b    endpointAddr
		want bool
	}{
		{"same machine", endpointAddr{local: "@b", machine: "boot/net:[1]"}, true},
		{"other network namespace", endpointAddr{local: "@b", machine: "boot/net:[2]"}, false},
		{"other kernel", endpointAddr{local: "@b", machine: "boot2/net:[1]"}, false},
		{"peer takes no local connections", endpointAddr{machine: "boot/net:[1]"}, false},
		{"unknown machine", endpointAddr{local: "@b"}, false},
	} {
		if got := useLocal(a, c.b); got != c.want || useLocal(c.b, a) != c.want {
			t.Errorf("%s: useLocal %v, want %v (both ways)", c.name, got, c.want)
		}
	}
	if useLocal(endpointAddr{local: "@a"}, endpointAddr{local: "@b"}) {
		t.Error("two ranks of unknown machines took the intra-host path")
	}
}

func TestShmDisabled(t *testing.T) {
	for v, want := range map[string]bool{"0": true, "off": true, " FALSE ": true, "no": true, "": false, "1": false, "on": false} {
		if shmDisabled(v) != want {
			t.Errorf("%s=%q: disabled %v, want %v", EnvShm, v, !want, want)
		}
	}
	env, ok := detect(func(k string) string {
		return map[string]string{EnvRank: "1", EnvSize: "2", EnvShm: "0"}[k]
	})
	if !ok || !env.NoShm {
		t.Errorf("detect with %s=0: %+v", EnvShm, env)
	}
}

// joinMachines joins len(machines) ranks in this process, rank r
// pretending to run on machines[r]; ranks in noShm keep off the
// intra-host path.
func joinMachines(t *testing.T, ctx context.Context, machines []string, noShm map[int]bool) []*Endpoint {
	t.Helper()
	var secret [8]byte
	rand.Read(secret[:])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := len(machines)
	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := Env{Rank: r, Size: n, Coordinator: ln.Addr().String(), Token: hex.EncodeToString(secret[:]), Listen: "127.0.0.1", NoShm: noShm[r]}
			opt := Options{Config: Config{Logger: quietLogger()}, machine: machines[r]}
			if r == 0 {
				opt.Listener = ln
			}
			eps[r], errs[r] = JoinWith(ctx, env, opt)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, e := range eps {
			if e != nil {
				e.Close()
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return eps
}

// checkPaths checks every rank's path to every other against want(i, j)
// and that every pair exchanges a message both ways.
func checkPaths(t *testing.T, ctx context.Context, eps []*Endpoint, want func(i, j int) string) {
	t.Helper()
	for i, e := range eps {
		for j := range eps {
			w := "self"
			if i != j {
				w = want(i, j)
			}
			if got := e.Path(j); got != w {
				t.Errorf("rank %d to rank %d: path %q, want %q", i, j, got, w)
			}
		}
	}
	errs := make(chan error, len(eps))
	for i, e := range eps {
		go func() {
			c := comm.NewWorld(e)
			var err error
			for j := range eps {
				if j == i {
					continue
				}
				b := make([]byte, 64)
				var st comm.Status
				if st, err = comm.Sendrecv(ctx, c, j, 7, []byte(fmt.Sprintf("%d->%d", i, j)), j, 7, b); err != nil {
					break
				}
				if got, want := string(b[:st.Count]), fmt.Sprintf("%d->%d", j, i); got != want {
					err = fmt.Errorf("rank %d got %q from rank %d, want %q", i, got, j, want)
					break
				}
			}
			errs <- err
		}()
	}
	for range eps {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// Ranks of one machine take the intra-host path, others TCP; the
// registration connection of a rank on rank 0's machine is replaced.
func TestIntraHostPathPerMachine(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	machines := []string{"A", "B", "A", "B", "C"}
	eps := joinMachines(t, ctx, machines, nil)
	checkPaths(t, ctx, eps, func(i, j int) string {
		if machines[i] == machines[j] {
			return "shm"
		}
		return "tcp"
	})
}

// A rank with the intra-host path off talks TCP to everyone; the others
// of its machine still use it among themselves.
func TestIntraHostPathOptOut(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps := joinMachines(t, ctx, []string{"A", "A", "A"}, map[int]bool{1: true})
	checkPaths(t, ctx, eps, func(i, j int) string {
		if i == 1 || j == 1 {
			return "tcp"
		}
		return "shm"
	})
}

// The worlds of this process's tests: the intra-host path by default,
// TCP with NoShm.
func TestLoopbackPaths(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		noShm bool
		want  string
	}{{false, "shm"}, {true, "tcp"}} {
		eps, err := JoinLoopback(ctx, 3, Config{NoShm: c.noShm})
		if err != nil {
			t.Fatal(err)
		}
		checkPaths(t, ctx, eps, func(i, j int) string { return c.want })
		for _, e := range eps {
			e.Close()
		}
	}
	e, err := JoinLoopback(ctx, 1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e[0].Close()
	if e[0].Path(0) != "self" || e[0].Path(1) != "" || e[0].Path(-1) != "" {
		t.Errorf("paths of a 1-rank world: %q %q %q", e[0].Path(0), e[0].Path(1), e[0].Path(-1))
	}
}

func TestRingFor(t *testing.T) {
	// 1 GiB / (p(p-1)), as a power of two between 16 KiB and 2 MiB.
	for p, want := range map[int]int{0: 2 << 20, 1: 2 << 20, 2: 2 << 20, 23: 2 << 20, 24: 1 << 20, 64: 256 << 10, 128: 64 << 10, 1000: 1 << 10 << 4} {
		if got := ringFor(p); got != want {
			t.Errorf("ringFor(%d) = %d, want %d", p, got, want)
		}
	}
}
