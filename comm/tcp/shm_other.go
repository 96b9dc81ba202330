//go:build !linux

package tcp

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// Without Linux's memfd the intra-host path stays a plain Unix socket
// (and without /proc, comm.Identity.Machine is empty and it is not taken).

func shmDial(uc *net.UnixConn, size int, populate bool, spin time.Duration) (net.Conn, error) {
	var msg [8]byte
	_, err := uc.Write(msg[:])
	return uc, err
}

func shmAccept(uc *net.UnixConn, spin time.Duration) (net.Conn, error) {
	var msg [8]byte
	if _, err := io.ReadFull(uc, msg[:]); err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	if n := binary.LittleEndian.Uint64(msg[:]); n != 0 {
		return nil, fmt.Errorf("shared memory: %w: rings of %d bytes offered, not supported on this system", errProtocol, n)
	}
	return uc, nil
}
