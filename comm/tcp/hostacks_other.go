//go:build !linux

package tcp

import (
	"net"
	"time"
)

// hostAcks: without TCP_INFO a TCP peer's host is not known to answer, so
// silence on TCP counts from HeartbeatTimeout as it always did; a
// connection within this machine answers (see the Linux version).
func hostAcks(conn net.Conn, within time.Duration) bool {
	_, tcp := conn.(*net.TCPConn)
	return !tcp
}
