package tcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"netaware/comm"
)

// Env is what a launcher told this process: its rank, the world size, the
// coordinator, the token.
type Env struct {
	Rank, Size int
	// Coordinator is the host:port where rank 0 listens and every rank
	// registers (NETAWARE_COORDINATOR or --coordinator).
	Coordinator string
	// Token is the shared secret every connection proves (NETAWARE_TOKEN).
	Token string
	// Listen is the host or IP this rank accepts mesh connections on
	// (NETAWARE_LISTEN); empty means the local address this host uses to
	// reach the coordinator. Rank 0 always listens on the coordinator address.
	Listen string
	// Source names the launcher the rank and size came from: "netaware",
	// "openmpi", "pmix", "pmi" or "slurm".
	Source string
	// NoShm keeps this rank off the intra-host path: it talks TCP to
	// every rank, also those of its own machine (NETAWARE_SHM=0).
	NoShm bool
	// ShmSpin, if positive, replaces Config.ShmSpin (NETAWARE_SHM_SPIN,
	// a Go duration such as 200us).
	ShmSpin time.Duration
}

// Environment variables read by Detect.
const (
	EnvRank        = "NETAWARE_RANK"
	EnvSize        = "NETAWARE_SIZE"
	EnvCoordinator = "NETAWARE_COORDINATOR"
	EnvToken       = "NETAWARE_TOKEN"
	EnvListen      = "NETAWARE_LISTEN"
)

// Detect reads this process's rank and world size from the environment a
// launcher set: netaware launch (NETAWARE_RANK/NETAWARE_SIZE), Open MPI's
// mpirun (OMPI_COMM_WORLD_RANK/SIZE), a PMIx launcher (PMIX_RANK with the
// size from OMPI_COMM_WORLD_SIZE, PMIX_SIZE or SLURM_NTASKS), MPICH's
// Hydra (PMI_RANK/PMI_SIZE) or Slurm's srun (SLURM_PROCID/SLURM_NTASKS).
// The coordinator, token and listen host come from NETAWARE_COORDINATOR,
// NETAWARE_TOKEN and NETAWARE_LISTEN whatever the launcher, and
// NETAWARE_SHM=0 turns the intra-host path off (for mpirun,
// pass them with -x; srun exports the caller's environment by default).
func Detect() (Env, bool) { return detect(os.Getenv) }

func detect(getenv func(string) string) (Env, bool) {
	type source struct {
		name       string
		rank       string
		size       []string
		acceptSize bool
	}
	sources := []source{
		{name: "netaware", rank: EnvRank, size: []string{EnvSize}},
		{name: "openmpi", rank: "OMPI_COMM_WORLD_RANK", size: []string{"OMPI_COMM_WORLD_SIZE"}},
		{name: "pmix", rank: "PMIX_RANK", size: []string{"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_NTASKS", "SLURM_NPROCS"}},
		{name: "pmi", rank: "PMI_RANK", size: []string{"PMI_SIZE"}},
		{name: "slurm", rank: "SLURM_PROCID", size: []string{"SLURM_NTASKS", "SLURM_NPROCS"}},
	}
	for _, s := range sources {
		rs := getenv(s.rank)
		if rs == "" {
			continue
		}
		rank, err := strconv.Atoi(strings.TrimSpace(rs))
		if err != nil {
			continue
		}
		size := -1
		for _, v := range s.size {
			if n, err := strconv.Atoi(strings.TrimSpace(getenv(v))); err == nil {
				size = n
				break
			}
		}
		if size < 1 || rank < 0 || rank >= size {
			continue
		}
		return Env{
			Rank:        rank,
			Size:        size,
			Coordinator: getenv(EnvCoordinator),
			Token:       getenv(EnvToken),
			Listen:      getenv(EnvListen),
			Source:      s.name,
			NoShm:       shmDisabled(getenv(EnvShm)),
			ShmSpin:     shmSpinEnv(getenv(EnvShmSpin)),
		}, true
	}
	return Env{}, false
}

// Options are the optional parts of JoinWith.
type Options struct {
	Config
	// Listener, for rank 0, is an already bound coordinator listener to use
	// instead of binding Env.Coordinator (tests bind 127.0.0.1:0 and pass it).
	Listener net.Listener
	// Waiting, if set, is called on rank 0 while it waits for the other
	// ranks to register: once at the start, whenever one registers, and
	// every second in between, with the ranks registered so far (rank 0
	// included) and the ranks still missing, so that a caller can show who
	// holds the world up (a rank whose launcher failed leaves a wait of
	// BootstrapTimeout otherwise silent). It must not block.
	Waiting func(registered int, missing []int)

	// machine, if set, replaces this rank's comm.Identity.Machine (tests
	// put the ranks of one process on different machines with it).
	machine string
}

// Join connects this rank to the world described by env and returns the
// world communicator and the closer that says goodbye to the other ranks.
// The closer is the *Endpoint, whose Abort marks this rank failed.
func Join(ctx context.Context, env Env) (comm.Comm, io.Closer, error) {
	ep, err := JoinWith(ctx, env, Options{})
	if err != nil {
		return nil, nil, err
	}
	return comm.NewWorld(ep), ep, nil
}

// JoinWith is Join with options; it returns the endpoint.
//
// Bootstrap: rank 0 listens on the coordinator address. Every other rank
// listens on its own address, dials the coordinator, authenticates, and
// registers its rank and address; once all have registered, rank 0 answers
// each with the table of addresses, and the registration connection stays
// as the link to rank 0. Then rank i dials every rank 0 < j < i and accepts
// from every j > i: a full mesh of authenticated connections, all opened
// before Join returns. Ranks of one machine connect over Unix sockets
// instead (see local.go): each rank also listens on one, and the
// registration connection of a rank on rank 0's machine is replaced by one.
func JoinWith(ctx context.Context, env Env, opt Options) (*Endpoint, error) {
	if env.ShmSpin > 0 {
		opt.Config.ShmSpin = env.ShmSpin
	}
	cfg := opt.Config.withDefaults()
	if env.Size < 1 || env.Rank < 0 || env.Rank >= env.Size {
		return nil, fmt.Errorf("tcp join: rank %d of %d is out of range", env.Rank, env.Size)
	}
	if err := checkShmRing(cfg.ShmRing); err != nil {
		return nil, fmt.Errorf("tcp join (rank %d of %d): %w", env.Rank, env.Size, err)
	}
	e := newEndpoint(env.Rank, env.Size, cfg)
	if opt.machine != "" {
		e.id.Machine = opt.machine
	}
	if env.Size == 1 {
		e.startGoroutines()
		return e, nil
	}
	if env.Coordinator == "" && opt.Listener == nil {
		return nil, fmt.Errorf("tcp join (rank %d of %d, from %s): no coordinator address: set %s=host:port (for mpirun: mpirun -x %s=host:port -x %s=secret ...)",
			env.Rank, env.Size, env.Source, EnvCoordinator, EnvCoordinator, EnvToken)
	}
	if env.Token == "" {
		return nil, fmt.Errorf("tcp join (rank %d of %d): no token: set %s to a shared secret (netaware launch does this)", env.Rank, env.Size, EnvToken)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.BootstrapTimeout)
	defer cancel()
	b := &bootstrap{env: env, cfg: cfg, token: []byte(env.Token), e: e, shm: !cfg.NoShm && !env.NoShm && e.id.Machine != ""}
	var err error
	if env.Rank == 0 {
		err = b.coordinate(ctx, opt.Listener, opt.Waiting)
	} else {
		err = b.register(ctx)
	}
	if err != nil {
		for _, p := range e.peers {
			if p != nil {
				p.conn.Close()
			}
		}
		return nil, fmt.Errorf("tcp join (rank %d of %d): %w", env.Rank, env.Size, err)
	}
	e.startGoroutines()
	cfg.Logger.Info("tcp: joined world", "rank", env.Rank, "size", env.Size, "addr", e.addr, "launcher", env.Source)
	return e, nil
}

type bootstrap struct {
	env   Env
	cfg   Config
	token []byte
	e     *Endpoint
	shm   bool // take local connections (and make them to ranks of this machine)
	ring  int  // the ring size this rank offers when it dials (0: no rings)
	// populate faults the rings in at Join (few ranks on this machine).
	populate bool
}

// listenLocal opens this rank's intra-host listener if it takes local
// connections; without one (disabled, or it cannot listen) it is reached
// over TCP by everyone.
func (b *bootstrap) listenLocal() net.Listener {
	if !b.shm {
		return nil
	}
	ln, err := listenLocal()
	if err != nil {
		b.cfg.Logger.Warn("tcp: no intra-host listener, ranks of this host use TCP", "rank", b.env.Rank, "err", err)
		return nil
	}
	return ln
}

// ringSize is the ring this rank offers the ranks of its machine it
// dials: Config.ShmRing, or by default as many ranks share the machine
// allow (ringFor). Default rings are faulted in at Join when all rings of
// the machine take at most prefaultBudget (up to 6 ranks on a machine):
// the first large messages then pay no page faults, which would otherwise
// show in the first repetitions of a measurement.
func (b *bootstrap) ringSize(me endpointAddr, addrs []endpointAddr) int {
	switch {
	case b.cfg.ShmRing < 0:
		return 0
	case b.cfg.ShmRing > 0:
		return b.cfg.ShmRing
	}
	p := 1
	for r, a := range addrs {
		if r != b.env.Rank && useLocal(me, a) {
			p++
		}
	}
	ring := ringFor(p)
	b.populate = p*(p-1)*ring <= prefaultBudget
	return ring
}

// self is this rank's entry of the address table.
func (b *bootstrap) self(local net.Listener) endpointAddr {
	a := endpointAddr{addr: b.e.addr}
	if local != nil {
		a.local, a.machine = local.Addr().String(), b.e.id.Machine
	}
	return a
}

// accepting runs acceptLoop on each listener (nil ones skipped), every one
// wanting up to want connections, all into one channel; stop closes the
// listeners and waits for the loops.
func (b *bootstrap) accepting(ctx context.Context, want int, lns ...net.Listener) (out chan accepted, stop func()) {
	out = make(chan accepted)
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, ln := range lns {
		if ln != nil {
			wg.Add(1)
			go func() { defer wg.Done(); b.acceptLoop(actx, ln, want, out) }()
		}
	}
	return out, func() {
		cancel() // before closing: a loop whose Accept fails must not wait to report it
		for _, ln := range lns {
			if ln != nil {
				ln.Close()
			}
		}
		wg.Wait()
	}
}

// accepted is an authenticated, introduced incoming connection.
type accepted struct {
	conn  net.Conn
	hello hello
	err   error
}

// listenExact binds exactly addr: a missing host is refused rather than
// silently widened to every interface.
func listenExact(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		return nil, fmt.Errorf("listen address %q has no host: name the interface (e.g. 127.0.0.1:%s, or 0.0.0.0 explicitly for all)", addr, strings.TrimPrefix(addr, ":"))
	}
	return net.Listen("tcp", addr)
}

// acceptLoop accepts connections until want of them authenticated and
// introduced themselves, refusing (and logging) the others. Results go to
// out; it stops when ctx is done or the listener is closed.
func (b *bootstrap) acceptLoop(ctx context.Context, ln net.Listener, want int, out chan<- accepted) {
	got := 0
	for got < want {
		conn, err := ln.Accept()
		if err != nil {
			select {
			case out <- accepted{err: err}:
			case <-ctx.Done():
			}
			return
		}
		tuneConn(conn)
		conn.SetDeadline(time.Now().Add(b.cfg.HandshakeTimeout))
		if err := serverHandshake(conn, b.token); err != nil {
			b.cfg.Logger.Warn("tcp: refused connection", "rank", b.env.Rank, "addr", remoteAddr(conn), "err", err)
			conn.Close()
			continue
		}
		h, err := readHello(conn, b.env.Size)
		if err == nil {
			if uc, ok := conn.(*net.UnixConn); ok {
				conn, err = shmAccept(uc, b.cfg.ShmSpin)
				if err != nil {
					uc.Close()
				}
			}
		}
		if err != nil {
			b.cfg.Logger.Warn("tcp: refused connection", "rank", b.env.Rank, "addr", remoteAddr(conn), "err", err)
			conn.Close()
			continue
		}
		got++
		select {
		case out <- accepted{conn: conn, hello: h}:
		case <-ctx.Done():
			conn.Close()
			return
		}
	}
}

// coordinate is rank 0's part.
func (b *bootstrap) coordinate(ctx context.Context, ln net.Listener, waiting func(int, []int)) (err error) {
	if ln == nil {
		if ln, err = listenExact(b.env.Coordinator); err != nil {
			return fmt.Errorf("coordinator: %w", err)
		}
	}
	b.e.addr = ln.Addr().String()
	lln := b.listenLocal()
	out, stopAccepting := b.accepting(ctx, b.env.Size-1, ln)
	defer stopAccepting()
	if lln != nil {
		defer lln.Close()
	}
	addrs := make([]endpointAddr, b.env.Size)
	addrs[0] = b.self(lln)
	conns := make([]net.Conn, b.env.Size)
	defer func() {
		if err != nil {
			for _, c := range conns {
				if c != nil {
					c.Close()
				}
			}
		}
	}()
	missing := func() []int {
		var m []int
		for r := 1; r < b.env.Size; r++ {
			if conns[r] == nil {
				m = append(m, r)
			}
		}
		return m
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for n := 1; n < b.env.Size; {
		if waiting != nil {
			waiting(n, missing())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for ranks to register (%d of %d did; missing: %s): %w", n-1, b.env.Size-1, rankNames(missing()), ctx.Err())
		case <-tick.C:
			continue
		case a := <-out:
			if a.err != nil {
				return fmt.Errorf("coordinator: %w", a.err)
			}
			r := a.hello.rank
			if r == 0 || conns[r] != nil {
				b.cfg.Logger.Warn("tcp: refused duplicate registration", "rank", r, "addr", remoteAddr(a.conn))
				a.conn.Close()
				return fmt.Errorf("rank %d registered twice or claims rank 0 (from %s)", r, remoteAddr(a.conn))
			}
			conns[r] = a.conn
			addrs[r] = a.hello.endpointAddr
			n++
		}
	}
	stopAccepting()
	var local []int // ranks of this machine: they come back over lln
	for r := 1; r < b.env.Size; r++ {
		if err := writeTable(conns[r], addrs); err != nil {
			return fmt.Errorf("sending the address table to rank %d: %w", r, err)
		}
		conns[r].SetDeadline(time.Time{})
		if useLocal(addrs[0], addrs[r]) {
			local = append(local, r)
			continue
		}
		b.e.attach(r, conns[r])
	}
	return b.acceptUpgrades(ctx, lln, local, conns)
}

// acceptUpgrades takes, from each rank of want (ranks of this machine),
// the intra-host connection that replaces its registration connection
// conns[r] (rank 0's part).
func (b *bootstrap) acceptUpgrades(ctx context.Context, lln net.Listener, want []int, conns []net.Conn) error {
	if len(want) == 0 {
		return nil
	}
	out, stop := b.accepting(ctx, len(want), lln)
	defer stop()
	for left := len(want); left > 0; left-- {
		var a accepted
		select {
		case <-ctx.Done():
			var missing []int
			for _, r := range want {
				if b.e.peers[r] == nil {
					missing = append(missing, r)
				}
			}
			return fmt.Errorf("waiting for ranks of this host to reconnect over the intra-host path (missing: %s; %s=0 turns it off): %w", rankNames(missing), EnvShm, ctx.Err())
		case a = <-out:
		}
		if a.err != nil {
			return fmt.Errorf("intra-host listener: %w", a.err)
		}
		r := a.hello.rank
		if !slices.Contains(want, r) || b.e.peers[r] != nil {
			a.conn.Close()
			return fmt.Errorf("unexpected intra-host connection from rank %d", r)
		}
		a.conn.SetDeadline(time.Time{})
		conns[r].Close()
		conns[r] = a.conn
		b.e.attach(r, a.conn)
	}
	return nil
}

// register is the part of every rank but 0.
func (b *bootstrap) register(ctx context.Context) error {
	conn, err := b.dialRetry(ctx, b.env.Coordinator)
	if err != nil {
		return fmt.Errorf("coordinator %s: %w", b.env.Coordinator, err)
	}
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	// Listen where this host reaches the coordinator from, unless told.
	host := b.env.Listen
	if host == "" {
		host = conn.LocalAddr().(*net.TCPAddr).IP.String()
	}
	ln, err := listenExact(net.JoinHostPort(host, "0"))
	if err != nil {
		return err
	}
	b.e.addr = ln.Addr().String()
	lln := b.listenLocal()
	out, stopAccepting := b.accepting(ctx, b.env.Size-1-b.env.Rank, ln, lln)
	defer stopAccepting()
	me := b.self(lln)

	if err := writeHello(conn, hello{rank: b.env.Rank, size: b.env.Size, endpointAddr: me}); err != nil {
		return fmt.Errorf("registering with the coordinator: %w", err)
	}
	conn.SetDeadline(time.Time{})
	tableCh := make(chan error, 1)
	var addrs []endpointAddr
	go func() {
		var err error
		addrs, err = readTable(conn, b.env.Size)
		tableCh <- err
	}()
	select {
	case err := <-tableCh:
		if err != nil {
			return fmt.Errorf("coordinator %s: %w", b.env.Coordinator, err)
		}
	case <-ctx.Done():
		conn.Close()
		<-tableCh
		conn = nil
		return fmt.Errorf("waiting for the coordinator's address table: %w", ctx.Err())
	}
	b.ring = b.ringSize(me, addrs)
	if useLocal(me, addrs[0]) {
		// Rank 0 shares our machine: the registration connection gives way
		// to an intra-host one (no frame has crossed it yet).
		c, err := b.dial(ctx, "unix", addrs[0].local)
		if err != nil {
			return fmt.Errorf("connecting to rank 0 on this host at %s (%s=0 turns the intra-host path off): %w", addrs[0].local, EnvShm, err)
		}
		conn.Close()
		conn = c
	}
	b.e.attach(0, conn)
	conn = nil
	for j := 1; j < b.env.Rank; j++ {
		network, addr := "tcp", addrs[j].addr
		if useLocal(me, addrs[j]) {
			network, addr = "unix", addrs[j].local
		}
		c, err := b.dial(ctx, network, addr)
		if err != nil {
			return fmt.Errorf("connecting to rank %d at %s: %w", j, addr, err)
		}
		b.e.attach(j, c)
	}
	for n := b.env.Rank + 1; n < b.env.Size; n++ {
		select {
		case <-ctx.Done():
			var missing []int
			for r := b.env.Rank + 1; r < b.env.Size; r++ {
				if b.e.peers[r] == nil {
					missing = append(missing, r)
				}
			}
			return fmt.Errorf("waiting for ranks above %d to connect (missing: %s): %w", b.env.Rank, rankNames(missing), ctx.Err())
		case a := <-out:
			if a.err != nil {
				return a.err
			}
			r := a.hello.rank
			if r <= b.env.Rank || b.e.peers[r] != nil {
				a.conn.Close()
				return fmt.Errorf("unexpected connection from rank %d (%s)", r, remoteAddr(a.conn))
			}
			a.conn.SetDeadline(time.Time{})
			b.e.attach(r, a.conn)
		}
	}
	return nil
}

// dial connects, authenticates and introduces this rank.
func (b *bootstrap) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAlive: 15 * time.Second, Timeout: b.cfg.HandshakeTimeout}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := b.handshake(conn); err != nil {
		conn.Close()
		return nil, err
	}
	if err := writeHello(conn, hello{rank: b.env.Rank, size: b.env.Size, endpointAddr: endpointAddr{addr: b.e.addr}}); err != nil {
		conn.Close()
		return nil, err
	}
	if uc, ok := conn.(*net.UnixConn); ok {
		sc, err := shmDial(uc, b.ring, b.populate, b.cfg.ShmSpin)
		if err != nil {
			conn.Close()
			return nil, err
		}
		conn = sc
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

func (b *bootstrap) handshake(conn net.Conn) error {
	tuneConn(conn)
	conn.SetDeadline(time.Now().Add(b.cfg.HandshakeTimeout))
	return clientHandshake(conn, b.token)
}

// dialRetry dials the coordinator until it answers (rank 0 may start
// later than the others) and authenticates; the hello is the caller's.
func (b *bootstrap) dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	delay := 20 * time.Millisecond
	for {
		d := net.Dialer{KeepAlive: 15 * time.Second, Timeout: b.cfg.HandshakeTimeout}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			if err = b.handshake(conn); err == nil {
				return conn, nil
			}
			conn.Close()
			if errors.Is(err, ErrAuth) {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// rankNames lists ranks for an error: "2, 5", or the first ten and how
// many more (a world of thousands whose launcher failed half way).
func rankNames(ranks []int) string {
	const most = 10
	var b strings.Builder
	for i, r := range ranks {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(ranks)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r))
	}
	return b.String()
}

func tuneConn(c net.Conn) {
	tuneLocal(c)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		tc.SetKeepAlive(true)
		tc.SetKeepAlivePeriod(15 * time.Second)
	}
}
