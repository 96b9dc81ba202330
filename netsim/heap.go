package netsim

// eventHeap orders flow slots by (time of their next event, flow id), so
// that events at equal times come out in start order whatever the heap's
// history. An entry carries its keys (a copy of the slot's event time), so
// that comparisons read nothing else.
type eventHeap struct {
	h []evEntry
	s *slots
}

type evEntry struct {
	t    float64
	id   int64
	slot int32
}

func (a evEntry) less(b evEntry) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.id < b.id
}

// top is the slot with the earliest event and its time.
func (e *eventHeap) top() (int32, float64) { return e.h[0].slot, e.h[0].t }

func (e *eventHeap) push(x int32) {
	e.h = append(e.h, evEntry{e.s.st[x].event, e.s.id[x], x})
	e.up(len(e.h) - 1)
}

func (e *eventHeap) pop() int32 {
	x := e.h[0].slot
	last := len(e.h) - 1
	e.h[0] = e.h[last]
	e.h = e.h[:last]
	if last > 0 {
		e.down(0)
	}
	e.s.hidx[x] = -1
	return x
}

// fix restores the order after x's event time changed.
func (e *eventHeap) fix(x int32) {
	i := int(e.s.hidx[x])
	if i < 0 {
		e.push(x)
		return
	}
	e.h[i].t = e.s.st[x].event
	if !e.down(i) {
		e.up(i)
	}
}

func (e *eventHeap) up(i int) {
	h, hidx := e.h, e.s.hidx
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !x.less(h[p]) {
			break
		}
		h[i] = h[p]
		hidx[h[i].slot] = int32(i)
		i = p
	}
	h[i] = x
	hidx[x.slot] = int32(i)
}

func (e *eventHeap) down(i0 int) bool {
	h, hidx := e.h, e.s.hidx
	i := i0
	n := len(h)
	x := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h[r].less(h[l]) {
			j = r
		}
		if !h[j].less(x) {
			break
		}
		h[i] = h[j]
		hidx[h[i].slot] = int32(i)
		i = j
	}
	h[i] = x
	hidx[x.slot] = int32(i)
	return i > i0
}

// resHeap is a min-heap of (share, resource) entries for the progressive
// filling, ties broken by resource index. It is 4-ary: pops outnumber
// pushes, and a shallower heap costs fewer mispredicted comparisons per
// pop. (The pop order is fixed by the total order on entries, not by the
// heap's shape.)
type resHeap struct{ items []resEntry }

type resEntry struct {
	key float64
	r   int32
}

func (a resEntry) less(b resEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.r < b.r
}

func (h *resHeap) push(key float64, r int32) {
	h.items = append(h.items, resEntry{key, r})
	s := h.items
	i := len(s) - 1
	x := s[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
}

// init orders items into a heap in linear time.
func (h *resHeap) init() {
	if len(h.items) < 2 {
		return
	}
	for i := (len(h.items) - 2) / 4; i >= 0; i-- {
		h.down(i)
	}
}

func (h *resHeap) pop() (float64, int32) {
	s := h.items
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	h.items = s[:last]
	if last > 0 {
		h.down(0)
	}
	return top.key, top.r
}

// rekeyTop gives the top entry a new key (a smaller one keeps it on top).
func (h *resHeap) rekeyTop(key float64) {
	h.items[0].key = key
	h.down(0)
}

func (h *resHeap) down(i int) {
	s := h.items
	n := len(s)
	x := s[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		j := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if s[k].less(s[j]) {
				j = k
			}
		}
		if !s[j].less(x) {
			break
		}
		s[i] = s[j]
		i = j
	}
	s[i] = x
}
