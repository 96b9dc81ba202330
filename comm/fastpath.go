package comm

import (
	"context"
	"fmt"
)

// BlockingReceiver is an optional extension of Endpoint: a blocking
// receive that needs no Request object. Irecv must return a Request the
// caller may keep, test and wait on as often as it likes, so a transport
// has to allocate one per receive; a blocking receive ends with the call,
// so the transport can reuse its bookkeeping. On the TCP transport that
// removes the one allocation per message left on a ping-pong's path.
// Semantics are those of Irecv followed by Wait.
type BlockingReceiver interface {
	RecvBlocking(ctx context.Context, cid uint64, src, tag int, b []byte) (Status, error)
}

// recvBlocking is communicator.Recv: through the endpoint's
// BlockingReceiver if it has one, else Irecv and Wait.
func (c *communicator) recvBlocking(ctx context.Context, src, tag int, b []byte) (Status, error) {
	br, ok := c.ep.(BlockingReceiver)
	if !ok {
		return c.Irecv(src, tag, b).Wait(ctx)
	}
	if err := c.checkPeer("recv", src, true); err != nil {
		return Status{}, err
	}
	wsrc := src
	if src != AnySource {
		wsrc = c.world(src)
	}
	st, err := br.RecvBlocking(ctx, c.cid, wsrc, tag, b)
	if err != nil || c.members == nil {
		return st, err
	}
	l, ok := c.local[st.Source]
	if !ok {
		return st, fmt.Errorf("message from world rank %d, not a member of this communicator", st.Source)
	}
	st.Source = l
	return st, nil
}
