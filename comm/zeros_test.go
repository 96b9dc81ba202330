package comm

import "testing"

// Zeros are zero, of the size asked, shared, and capped so that an append
// never writes into the shared bytes.
func TestZerosShared(t *testing.T) {
	a, b := Zeros(100), Zeros(10)
	if len(a) != 100 || len(b) != 10 || cap(b) != 10 || &a[0] != &b[0] {
		t.Fatalf("len %d/%d cap %d, shared %v", len(a), len(b), cap(b), &a[0] == &b[0])
	}
	for _, v := range a {
		if v != 0 {
			t.Fatal("not zero")
		}
	}
	if Zeros(0) != nil || Zeros(-1) != nil {
		t.Fatal("no bytes should be nil")
	}
	if c := Zeros(1000); len(c) != 1000 || c[999] != 0 {
		t.Fatal("growth")
	}
}
