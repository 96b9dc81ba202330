//go:build linux

package tcp

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// hostAcks reports whether the host at the other end of conn still
// acknowledges what this end sends: it has nothing unacknowledged, or its
// last acknowledgement is younger than within. The peer's kernel answers
// for a process that is stopped, starved of CPU or hung, not for a host
// that is down or cut off. A connection within this machine (Unix socket,
// shared memory) always does: its kernel is ours, and a killed process
// closes its end. Unknown (no TCP_INFO): false.
func hostAcks(conn net.Conn, within time.Duration) bool {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return true
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	var info *unix.TCPInfo
	var ierr error
	if err := rc.Control(func(fd uintptr) {
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || ierr != nil {
		return false
	}
	return info.Unacked == 0 || time.Duration(info.Last_ack_recv)*time.Millisecond < within
}
