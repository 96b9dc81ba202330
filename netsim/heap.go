package netsim

// eventHeap orders flows by (time of their next event, id), so that events
// at equal times come out in start order whatever the heap's history.
type eventHeap []*Flow

func (h eventHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.event != b.event {
		return a.event < b.event
	}
	return a.id < b.id
}

func (h eventHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx = i
	h[j].hidx = j
}

func (h *eventHeap) push(f *Flow) {
	f.hidx = len(*h)
	*h = append(*h, f)
	h.up(f.hidx)
}

func (h *eventHeap) pop() *Flow {
	old := *h
	f := old[0]
	last := len(old) - 1
	old.swap(0, last)
	old[last] = nil
	*h = old[:last]
	if last > 0 {
		h.down(0)
	}
	f.hidx = -1
	return f
}

// fix restores the order after f's event time changed.
func (h *eventHeap) fix(f *Flow) {
	if f.hidx < 0 {
		h.push(f)
		return
	}
	if !h.down(f.hidx) {
		h.up(f.hidx)
	}
}

func (h eventHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h eventHeap) down(i0 int) bool {
	i := i0
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// resHeap is a min-heap of (share, resource) entries for the progressive
// filling, ties broken by resource index.
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
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// init orders items into a heap in linear time.
func (h *resHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *resHeap) pop() (float64, int32) {
	s := h.items
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	h.items = s[:last]
	h.down(0)
	return top.key, top.r
}

func (h *resHeap) down(i int) {
	s := h.items
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		j := l
		if r := l + 1; r < len(s) && s[r].less(s[l]) {
			j = r
		}
		if !s[j].less(s[i]) {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
}
