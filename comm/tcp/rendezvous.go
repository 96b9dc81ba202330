// Synchronous sends (Ssend): the ack on match and the table of sends
// awaiting one.

package tcp

import "netaware/comm"

// matched runs the sender-side consequences of a match: the ack of a
// synchronous send.
func (e *Endpoint) matched(m *inmsg) {
	if m.local != nil {
		m.local.complete(comm.Status{}, nil)
	}
	if m.sync {
		if p := e.peers[m.src]; p != nil && !p.gone.Load() {
			p.queue(ctrlFrame{h: header{kind: kindAck, id: m.syncID}})
		}
	}
}

func (p *peer) addPending(r *request) uint64 {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.nextID++
	p.pending[p.nextID] = r
	return p.nextID
}

func (p *peer) takePending(id uint64) *request {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	r := p.pending[id]
	delete(p.pending, id)
	return r
}
