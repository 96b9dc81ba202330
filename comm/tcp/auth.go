package tcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Mutual authentication. Both ends know a shared secret (the token); neither
// sends it. The dialer opens with a fresh nonce, the listener answers with
// its own nonce and proves knowledge of the token with
// HMAC-SHA256(token, "netaware-server" | nc | ns); the dialer checks it and
// proves itself with HMAC-SHA256(token, "netaware-client" | nc | ns); the
// listener confirms with one status byte. Distinct role labels stop a peer
// from reflecting one side's proof back to it, fresh nonces on both sides
// stop replays, and proofs are compared in constant time (hmac.Equal).
// All messages have fixed sizes, so a hostile peer cannot make either side
// allocate anything.

const (
	authMagic = "NETAWR01"
	nonceSize = 32
	macSize   = sha256.Size
	statusOK  = 0xA5
)

// ErrAuth is returned when a peer fails authentication (wrong token).
var ErrAuth = errors.New("authentication failed (wrong token?)")

func proof(token []byte, role string, nc, ns []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(role))
	m.Write(nc)
	m.Write(ns)
	return m.Sum(nil)
}

func nonce() ([]byte, error) {
	b := make([]byte, nonceSize)
	_, err := rand.Read(b)
	return b, err
}

// clientHandshake runs the dialer's side on rw (deadlines are the caller's).
func clientHandshake(rw io.ReadWriter, token []byte) error {
	nc, err := nonce()
	if err != nil {
		return err
	}
	hello := append([]byte(authMagic), nc...)
	if _, err := rw.Write(hello); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	var resp [len(authMagic) + nonceSize + macSize]byte
	if _, err := io.ReadFull(rw, resp[:]); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if string(resp[:len(authMagic)]) != authMagic {
		return fmt.Errorf("handshake: peer is not a netaware rank (bad magic)")
	}
	ns := resp[len(authMagic) : len(authMagic)+nonceSize]
	if !hmac.Equal(resp[len(authMagic)+nonceSize:], proof(token, "netaware-server", nc, ns)) {
		return fmt.Errorf("handshake: listener's proof: %w", ErrAuth)
	}
	if _, err := rw.Write(proof(token, "netaware-client", nc, ns)); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	var st [1]byte
	if _, err := io.ReadFull(rw, st[:]); err != nil {
		return fmt.Errorf("handshake: listener refused us: %w (%w)", ErrAuth, err)
	}
	if st[0] != statusOK {
		return fmt.Errorf("handshake: listener refused us: %w", ErrAuth)
	}
	return nil
}

// serverHandshake runs the listener's side on rw.
func serverHandshake(rw io.ReadWriter, token []byte) error {
	var hello [len(authMagic) + nonceSize]byte
	if _, err := io.ReadFull(rw, hello[:]); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if string(hello[:len(authMagic)]) != authMagic {
		return fmt.Errorf("handshake: peer is not a netaware rank (bad magic)")
	}
	nc := hello[len(authMagic):]
	ns, err := nonce()
	if err != nil {
		return err
	}
	resp := append(append([]byte(authMagic), ns...), proof(token, "netaware-server", nc, ns)...)
	if _, err := rw.Write(resp); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	var mac [macSize]byte
	if _, err := io.ReadFull(rw, mac[:]); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if !hmac.Equal(mac[:], proof(token, "netaware-client", nc, ns)) {
		return fmt.Errorf("handshake: dialer's proof: %w", ErrAuth)
	}
	if _, err := rw.Write([]byte{statusOK}); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	return nil
}

// After authentication the dialer introduces itself: its rank, the world
// size it believes in, and where it can be reached (see endpointAddr).
// Every string is length-prefixed and at most maxAddr bytes.
const maxAddr = 255

// endpointAddr is where a rank accepts mesh connections: its TCP address
// (empty for none), its Unix socket address for ranks of its own machine
// (empty when it takes no local connections) and the machine it runs on
// (comm.Identity.Machine).
type endpointAddr struct {
	addr, local, machine string
}

type hello struct {
	rank, size int
	endpointAddr
}

func appendAddr(b []byte, a endpointAddr) ([]byte, error) {
	for _, s := range [...]string{a.addr, a.local, a.machine} {
		if len(s) > maxAddr {
			return nil, fmt.Errorf("address %q too long", s)
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

func readAddr(r io.Reader) (endpointAddr, error) {
	var out [3]string
	for i := range out {
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return endpointAddr{}, err
		}
		n := int(binary.LittleEndian.Uint16(l[:]))
		if n > maxAddr {
			return endpointAddr{}, fmt.Errorf("address of %d bytes", n)
		}
		a := make([]byte, n)
		if _, err := io.ReadFull(r, a); err != nil {
			return endpointAddr{}, err
		}
		out[i] = string(a)
	}
	return endpointAddr{addr: out[0], local: out[1], machine: out[2]}, nil
}

func writeHello(w io.Writer, h hello) error {
	b := make([]byte, 8, 8+len(h.addr)+len(h.local)+len(h.machine)+6)
	binary.LittleEndian.PutUint32(b[0:], uint32(h.rank))
	binary.LittleEndian.PutUint32(b[4:], uint32(h.size))
	b, err := appendAddr(b, h.endpointAddr)
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	_, err = w.Write(b)
	return err
}

func readHello(r io.Reader, size int) (hello, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return hello{}, fmt.Errorf("hello: %w", err)
	}
	h := hello{rank: int(binary.LittleEndian.Uint32(b[0:])), size: int(binary.LittleEndian.Uint32(b[4:]))}
	if h.size != size {
		return hello{}, fmt.Errorf("hello: peer believes the world has %d ranks, we have %d", h.size, size)
	}
	if h.rank < 0 || h.rank >= size {
		return hello{}, fmt.Errorf("hello: rank %d out of range [0,%d)", h.rank, size)
	}
	a, err := readAddr(r)
	if err != nil {
		return hello{}, fmt.Errorf("hello: %w", err)
	}
	h.endpointAddr = a
	return h, nil
}

// The coordinator answers a registration with the table of every rank's
// addresses: a count, then each rank's endpointAddr.
func writeTable(w io.Writer, addrs []endpointAddr) error {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(addrs)))
	for _, a := range addrs {
		var err error
		if b, err = appendAddr(b, a); err != nil {
			return fmt.Errorf("address table: %w", err)
		}
	}
	_, err := w.Write(b)
	return err
}

func readTable(r io.Reader, size int) ([]endpointAddr, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, fmt.Errorf("address table: %w", err)
	}
	if n := int(binary.LittleEndian.Uint32(b[:])); n != size {
		return nil, fmt.Errorf("address table has %d entries, want %d", n, size)
	}
	addrs := make([]endpointAddr, size)
	for i := range addrs {
		a, err := readAddr(r)
		if err != nil {
			return nil, fmt.Errorf("address table, rank %d: %w", i, err)
		}
		addrs[i] = a
	}
	return addrs, nil
}
