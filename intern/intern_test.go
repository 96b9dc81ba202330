package intern

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

type val struct{ s string }

func decode(calls *int) func([]byte) (*val, error) {
	return func(b []byte) (*val, error) {
		*calls++
		if len(b) == 0 {
			return nil, errors.New("empty")
		}
		return &val{string(b)}, nil
	}
}

// Equal bytes give the same value and decode once; other bytes another
// value; a decode error is returned and nothing is kept.
func TestGetSharesEqualEncodings(t *testing.T) {
	var tab Table[val]
	calls := 0
	a, err := tab.Get([]byte("tree-1"), decode(&calls))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tab.Get([]byte("tree-1"), decode(&calls))
	c, _ := tab.Get([]byte("tree-2"), decode(&calls))
	if a != b || a == c || calls != 2 || a.s != "tree-1" || c.s != "tree-2" {
		t.Fatalf("a %p b %p c %p, %d decodes", a, b, c, calls)
	}
	if _, err := tab.Get(nil, decode(&calls)); err == nil {
		t.Fatal("decode error lost")
	}
	if got := tab.Put([]byte("tree-2"), &val{"other"}); got != c {
		t.Fatal("Put replaced a live value")
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(c)
}

// Once nobody holds a value, its entry goes: the table does not keep
// every tree of a long process.
func TestValuesAreNotKeptAlive(t *testing.T) {
	var tab Table[val]
	calls := 0
	for i := 0; i < 100; i++ {
		if _, err := tab.Get([]byte("v"+strconv.Itoa(i)), decode(&calls)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20 && tab.Len() > 0; i++ {
		runtime.GC()
	}
	if n := tab.Len(); n != 0 {
		t.Fatalf("%d values still live", n)
	}
}

// Ranks as goroutines: every one gets the same copy.
func TestConcurrentRanksShareOneCopy(t *testing.T) {
	var tab Table[val]
	const n = 64
	got := make([]*val, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	calls := 0
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := tab.Get([]byte("final tree"), func(b []byte) (*val, error) {
				mu.Lock()
				calls++
				mu.Unlock()
				return &val{string(b)}, nil
			})
			if err != nil {
				t.Error(err)
			}
			got[r] = v
		}()
	}
	wg.Wait()
	for r := 1; r < n; r++ {
		if got[r] != got[0] {
			t.Fatalf("rank %d got another copy", r)
		}
	}
	if calls < 1 || calls > n {
		t.Fatalf("%d decodes", calls)
	}
}
