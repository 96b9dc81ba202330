// Package match is MPI's message-matching engine, shared by the transports:
// posted receives and unexpected messages, matched on (context, source, tag)
// with wildcards, in order.
//
// Order rules (MPI's non-overtaking rule): a message matches the earliest
// posted receive that accepts it, and a receive matches the earliest arrived
// message it accepts. Transports must hand messages from one source to
// Arrive in the order they were sent.
//
// The engine does no locking; the transport serializes calls.
package match

import (
	"cmp"
	"container/list"
	"slices"
)

// Wildcards, equal to comm.AnySource and comm.AnyTag.
const (
	AnySource = -1
	AnyTag    = -1
)

type key struct {
	cid      uint64
	src, tag int
}

// accepts tells whether a receive for (cid, src, tag), possibly with
// wildcards, accepts a message with envelope k. AnyTag never matches the
// negative system tags.
func accepts(cid uint64, src, tag int, k key) bool {
	return cid == k.cid &&
		(src == AnySource || src == k.src) &&
		(tag == k.tag || (tag == AnyTag && k.tag >= 0))
}

type unexpected[M any] struct {
	seq   uint64
	k     key
	msg   M
	byKey *list.Element // in Engine.unexp[k]
	all   *list.Element // in Engine.unexpAll
}

// Ticket identifies a posted receive, for Cancel.
type Ticket struct{ e *list.Element }

type posted[R any] struct {
	seq      uint64
	cid      uint64
	src, tag int
	recv     R
	wildcard bool
	list     *list.List
}

// Engine matches messages of type M with receives of type R.
type Engine[M, R any] struct {
	seq      uint64
	unexp    map[key]*list.List // of *unexpected[M], arrival order
	unexpAll *list.List         // of *unexpected[M], arrival order
	post     map[key]*list.List // of *posted[R], exact receives, post order
	postWild *list.List         // of *posted[R] with a wildcard, post order
	nUnexp   int
	nPosted  int
}

// New returns an empty engine.
func New[M, R any]() *Engine[M, R] {
	return &Engine[M, R]{
		unexp:    map[key]*list.List{},
		unexpAll: list.New(),
		post:     map[key]*list.List{},
		postWild: list.New(),
	}
}

// Arrive offers a message with a concrete envelope. If a posted receive
// accepts it, that receive is removed and returned; otherwise the message is
// queued as unexpected.
func (e *Engine[M, R]) Arrive(cid uint64, src, tag int, msg M) (recv R, ok bool) {
	k := key{cid, src, tag}
	var best *list.Element
	if l := e.post[k]; l != nil && l.Len() > 0 {
		best = l.Front()
	}
	for el := e.postWild.Front(); el != nil; el = el.Next() {
		p := el.Value.(*posted[R])
		if accepts(p.cid, p.src, p.tag, k) {
			if best == nil || p.seq < best.Value.(*posted[R]).seq {
				best = el
			}
			break
		}
	}
	if best != nil {
		p := best.Value.(*posted[R])
		e.removePosted(best)
		return p.recv, true
	}
	e.seq++
	u := &unexpected[M]{seq: e.seq, k: k, msg: msg}
	l := e.unexp[k]
	if l == nil {
		l = list.New()
		e.unexp[k] = l
	}
	u.byKey = l.PushBack(u)
	u.all = e.unexpAll.PushBack(u)
	e.nUnexp++
	return recv, false
}

// Post offers a receive. If an unexpected message matches, it is removed and
// returned with its envelope; otherwise the receive is queued and a ticket
// for Cancel is returned.
func (e *Engine[M, R]) Post(cid uint64, src, tag int, recv R) (msg M, msrc, mtag int, t Ticket, ok bool) {
	var found *unexpected[M]
	if src != AnySource && tag != AnyTag {
		if l := e.unexp[key{cid, src, tag}]; l != nil && l.Len() > 0 {
			found = l.Front().Value.(*unexpected[M])
		}
	} else {
		for el := e.unexpAll.Front(); el != nil; el = el.Next() {
			u := el.Value.(*unexpected[M])
			if accepts(cid, src, tag, u.k) {
				found = u
				break
			}
		}
	}
	if found != nil {
		l := e.unexp[found.k]
		l.Remove(found.byKey)
		if l.Len() == 0 {
			delete(e.unexp, found.k)
		}
		e.unexpAll.Remove(found.all)
		e.nUnexp--
		return found.msg, found.k.src, found.k.tag, Ticket{}, true
	}
	e.seq++
	p := &posted[R]{seq: e.seq, cid: cid, src: src, tag: tag, recv: recv}
	if src == AnySource || tag == AnyTag {
		p.wildcard = true
		p.list = e.postWild
	} else {
		k := key{cid, src, tag}
		l := e.post[k]
		if l == nil {
			l = list.New()
			e.post[k] = l
		}
		p.list = l
	}
	t = Ticket{p.list.PushBack(p)}
	e.nPosted++
	return msg, 0, 0, t, false
}

func (e *Engine[M, R]) removePosted(el *list.Element) {
	p := el.Value.(*posted[R])
	p.list.Remove(el)
	if !p.wildcard && p.list.Len() == 0 {
		delete(e.post, key{p.cid, p.src, p.tag})
	}
	p.list = nil
	e.nPosted--
}

// Cancel removes a posted receive that has not matched yet; it reports
// whether it was still posted.
func (e *Engine[M, R]) Cancel(t Ticket) bool {
	if t.e == nil {
		return false
	}
	p, ok := t.e.Value.(*posted[R])
	if !ok || p.list == nil {
		return false
	}
	e.removePosted(t.e)
	return true
}

// Len returns the number of unexpected messages and posted receives.
func (e *Engine[M, R]) Len() (unexpected, posted int) { return e.nUnexp, e.nPosted }

// Posted calls fn for every posted receive, in post order.
func (e *Engine[M, R]) Posted(fn func(cid uint64, src, tag int, recv R)) {
	var all []*posted[R]
	for _, l := range e.post {
		for el := l.Front(); el != nil; el = el.Next() {
			all = append(all, el.Value.(*posted[R]))
		}
	}
	for el := e.postWild.Front(); el != nil; el = el.Next() {
		all = append(all, el.Value.(*posted[R]))
	}
	slices.SortFunc(all, func(a, b *posted[R]) int { return cmp.Compare(a.seq, b.seq) })
	for _, p := range all {
		fn(p.cid, p.src, p.tag, p.recv)
	}
}

// Unexpected calls fn for every queued message in arrival order.
func (e *Engine[M, R]) Unexpected(fn func(cid uint64, src, tag int, msg M)) {
	for el := e.unexpAll.Front(); el != nil; el = el.Next() {
		u := el.Value.(*unexpected[M])
		fn(u.k.cid, u.k.src, u.k.tag, u.msg)
	}
}
