package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Wire framing. Every frame starts with a fixed 40-byte little-endian
// header; only data and abort frames carry a payload after it:
//
//	offset size field
//	0      1    kind (data, ack, heartbeat, bye, abort)
//	1      1    flags (flagSync: the sender waits for an ack on match)
//	2      6    reserved, zero
//	8      8    context id of the communicator (data)
//	16     8    tag (data) or failed rank (abort), signed
//	24     8    payload length in bytes
//	32     8    synchronous-send id (data with flagSync, ack)
//
// A fixed header keeps decoding branch-free and lets a receiver learn the
// whole envelope in one read before deciding where the payload goes (straight
// into a posted receive buffer, or into the unexpected queue).
const headerSize = 40

const (
	kindData      byte = 1
	kindAck       byte = 2
	kindHeartbeat byte = 3
	kindBye       byte = 4
	kindAbort     byte = 5
)

const flagSync byte = 1

// maxReason bounds the text an abort frame may carry.
const maxReason = 4096

type header struct {
	kind   byte
	flags  byte
	cid    uint64
	tag    int64
	length int64
	id     uint64
}

func (h *header) encode(b []byte) {
	_ = b[headerSize-1]
	b[0] = h.kind
	b[1] = h.flags
	clear(b[2:8])
	binary.LittleEndian.PutUint64(b[8:], h.cid)
	binary.LittleEndian.PutUint64(b[16:], uint64(h.tag))
	binary.LittleEndian.PutUint64(b[24:], uint64(h.length))
	binary.LittleEndian.PutUint64(b[32:], h.id)
}

var errProtocol = errors.New("protocol error")

// decodeHeader parses and validates a header; maxMessage bounds the payload
// a data frame may announce, so that a corrupt or hostile length can never
// make the receiver allocate or read more than the configured limit.
func decodeHeader(b []byte, maxMessage int64) (header, error) {
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: short header (%d bytes)", errProtocol, len(b))
	}
	_ = b[headerSize-1]
	w0 := binary.LittleEndian.Uint64(b[0:])
	h := header{
		kind:   byte(w0),
		flags:  byte(w0 >> 8),
		cid:    binary.LittleEndian.Uint64(b[8:]),
		tag:    int64(binary.LittleEndian.Uint64(b[16:])),
		length: int64(binary.LittleEndian.Uint64(b[24:])),
		id:     binary.LittleEndian.Uint64(b[32:]),
	}
	if w0>>16 != 0 {
		return header{}, fmt.Errorf("%w: reserved header bytes set", errProtocol)
	}
	if h.flags&^flagSync != 0 {
		return header{}, fmt.Errorf("%w: unknown flags %#x", errProtocol, h.flags)
	}
	if h.tag != int64(int(h.tag)) || h.tag < -1<<40 || h.tag > 1<<40 {
		return header{}, fmt.Errorf("%w: tag %d out of range", errProtocol, h.tag)
	}
	if h.length < 0 {
		return header{}, fmt.Errorf("%w: negative length", errProtocol)
	}
	switch h.kind {
	case kindData:
		if h.length > maxMessage {
			return header{}, fmt.Errorf("%w: message of %d bytes exceeds the limit of %d bytes", errProtocol, h.length, maxMessage)
		}
		if h.tag == -1 {
			return header{}, fmt.Errorf("%w: data frame with the AnyTag wildcard", errProtocol)
		}
	case kindAck, kindHeartbeat, kindBye:
		if h.length != 0 || h.flags != 0 {
			return header{}, fmt.Errorf("%w: control frame %d with payload or flags", errProtocol, h.kind)
		}
	case kindAbort:
		if h.length > maxReason || h.flags != 0 || h.tag < 0 {
			return header{}, fmt.Errorf("%w: malformed abort frame", errProtocol)
		}
	default:
		return header{}, fmt.Errorf("%w: unknown frame kind %d", errProtocol, h.kind)
	}
	return h, nil
}
