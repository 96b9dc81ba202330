// The intra-host path. Ranks of one machine (the same kernel and network
// namespace: comm.Identity.Machine) connect over Unix domain stream sockets
// instead of loopback TCP, with the same framing, authentication and
// engine: only the socket under a peer changes. A Unix socket skips the
// TCP/IP stack (segmentation, acknowledgements, the loopback device and its
// softirq), which is most of a small message's cost on loopback.
//
// The sockets are abstract (Linux): no file to create or clean up, and an
// abstract name lives in the network namespace, so ranks of one machine
// in different namespaces (the hosts of 'netaware emu') could not reach
// each other that way even if they tried; they do not try, since their
// Machine strings differ, and keep talking over their (emulated) network.

package tcp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"
)

// EnvShm disables the intra-host path when set to 0, off, false or no.
const EnvShm = "NETAWARE_SHM"

// EnvShmSpin sets how long a receiver polls its ring before sleeping
// (Config.ShmSpin), as a Go duration: 200us, 1ms.
const EnvShmSpin = "NETAWARE_SHM_SPIN"

// shmSpinEnv parses EnvShmSpin; 0 (the default applies) if unset or not
// a positive duration.
func shmSpinEnv(v string) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}

func shmDisabled(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "off", "false", "no":
		return true
	}
	return false
}

// Path names how this rank reaches rank r: "self", "shm" (the
// intra-host path: shared-memory rings), "unix" (the intra-host path
// without rings, Config.ShmRing < 0) or "tcp"; "" for a rank out of range.
func (e *Endpoint) Path(r int) string {
	switch {
	case r < 0 || r >= e.size:
		return ""
	case r == e.rank:
		return "self"
	}
	switch e.peers[r].conn.(type) {
	case drivenConn:
		return "shm"
	case *net.UnixConn:
		return "unix"
	}
	return "tcp"
}

// shmRing is the largest default ring per direction: a 1 MiB message and
// its header fit whole (a ping-pong never waits for room).
const shmRing = 2 << 20

// shmBudget bounds the memory the default rings of one machine take
// together once traffic has touched all their pages: P ranks on a machine
// have P(P-1)/2 pairs of two rings each, so each ring gets at most
// shmBudget / (P(P-1)), a power of two between minRing and shmRing:
// 2 MiB up to 23 ranks per machine, 256 KiB at 64, 64 KiB at 128.
const (
	shmBudget      = 1 << 30
	minRing        = 16 << 10
	prefaultBudget = 64 << 20
)

// ringFor is the default ring size for p ranks on one machine.
func ringFor(p int) int {
	if p < 2 {
		return shmRing
	}
	per := shmBudget / (p * (p - 1))
	r := shmRing
	for r > minRing && r > per {
		r /= 2
	}
	return r
}

// shmSpin is how long a driver spins on an empty ring before sleeping on
// the doorbell; a reply that comes sooner costs no system call and no
// wake-up (the sleep and wake-up cost about as much as this).
const shmSpin = 200 * time.Microsecond

// maxRing bounds a ring (the acceptor refuses larger offers).
const maxRing = 64 << 20

// checkShmRing refuses a ring size the acceptor would refuse.
func checkShmRing(n int) error {
	if n <= 0 || n >= 4096 && n <= maxRing && n&(n-1) == 0 {
		return nil
	}
	return fmt.Errorf("shared-memory ring of %d bytes: want a power of two from 4 KiB to 64 MiB (negative: no rings)", n)
}

// drivenConn is a connection that wants to know who reads it: the
// shared-memory rings (shm_linux.go).
type drivenConn interface {
	setDriving(on bool) // a driver reads now (it may spin for its message)
	// f runs when a write has to wait for room: at once (waited false),
	// and again once a short wait did not bring any (waited true).
	setOnFull(f func(waited bool))
	// release frees the memory of the incoming ring once nothing reads it
	// (at the end of Close): mappings stay valid, so a late access cannot
	// fault, and the rest goes when the connection is collected.
	release()
}

// listenLocal listens on a fresh abstract Unix socket.
func listenLocal() (net.Listener, error) {
	var r [12]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	return net.Listen("unix", "@netaware-"+hex.EncodeToString(r[:]))
}

// useLocal says whether ranks at a and b connect over the intra-host path:
// both take local connections and both run on one known machine. Both
// ends decide alike from the same table.
func useLocal(a, b endpointAddr) bool {
	return a.local != "" && b.local != "" && a.machine != "" && a.machine == b.machine
}

// localBuffer is the send buffer of an intra-host socket. A Unix stream
// socket queues at most its sender's buffer (default 208 KiB): a larger
// one lets a 1 MiB message go in one write and come out in one read,
// where the default costs a sleep and a wake-up per 208 KiB on both sides.
// The kernel caps it at net.core.wmem_max.
const localBuffer = 4 << 20

func tuneLocal(c net.Conn) {
	if uc, ok := c.(*net.UnixConn); ok {
		uc.SetWriteBuffer(localBuffer)
		uc.SetReadBuffer(localBuffer)
	}
}

// remoteAddr names a connection's far end for logs and errors ("" ends,
// as an accepted Unix socket has, become the network's name).
func remoteAddr(c net.Conn) string {
	if a := c.RemoteAddr(); a != nil && a.String() != "" {
		return a.String()
	}
	if c.LocalAddr() != nil {
		return c.LocalAddr().Network() + " peer"
	}
	return "unknown"
}
