package tcp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"netaware/comm"
)

func frame(h header, payload []byte) []byte {
	b := make([]byte, headerSize)
	h.encode(b)
	return append(b, payload...)
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []header{
		{kind: kindData, cid: comm.WorldContext, tag: 7, length: 100},
		{kind: kindData, flags: flagSync, cid: 1 << 63, tag: int64(comm.SystemTag(5)), length: 0, id: 42},
		{kind: kindAck, id: 9},
		{kind: kindHeartbeat},
		{kind: kindBye},
		{kind: kindAbort, tag: 3, length: 12},
	} {
		b := make([]byte, headerSize)
		h.encode(b)
		got, err := decodeHeader(b, 1000)
		if err != nil || got != h {
			t.Errorf("%+v: decoded %+v, %v", h, got, err)
		}
	}
	bad := []header{
		{kind: kindData, length: 1001},
		{kind: kindData, tag: -1},
		{kind: kindAck, length: 1},
		{kind: 99},
		{kind: kindData, flags: 0x80},
		{kind: kindAbort, length: maxReason + 1},
		{kind: kindData, length: -5},
	}
	for _, h := range bad {
		b := make([]byte, headerSize)
		h.encode(b)
		if _, err := decodeHeader(b, 1000); !errors.Is(err, errProtocol) {
			t.Errorf("%+v accepted (%v)", h, err)
		}
	}
}

// FuzzFrameDecode feeds arbitrary bytes, as if sent by peer 1, to the real
// reader of rank 0 (with receives posted, so that both the direct and the
// unexpected paths run): it must never panic, must stop at the first
// malformed frame, and must not allocate beyond a small bound whatever
// lengths the bytes announce.
func FuzzFrameDecode(f *testing.F) {
	f.Add(frame(header{kind: kindData, cid: comm.WorldContext, tag: 0, length: 5}, []byte("hello")))
	f.Add(append(frame(header{kind: kindData, flags: flagSync, cid: comm.WorldContext, tag: 1, length: 3, id: 1}, []byte("abc")),
		frame(header{kind: kindBye}, nil)...))
	f.Add(frame(header{kind: kindData, cid: comm.WorldContext, tag: 2, length: 1 << 16}, []byte("short")))
	f.Add(frame(header{kind: kindAbort, tag: 1, length: 4}, []byte("boom")))
	f.Add(frame(header{kind: kindAck, id: 77}, nil))
	f.Add(append(frame(header{kind: kindHeartbeat}, nil), 1, 2, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := Config{MaxMessage: 1 << 16, Logger: quietLogger()}.withDefaults()
		e := newEndpoint(0, 2, cfg)
		a, b := net.Pipe()
		e.attach(1, a)
		posted := []comm.Request{
			e.Irecv(comm.WorldContext, 1, 0, make([]byte, 64)),
			e.Irecv(comm.WorldContext, comm.AnySource, comm.AnyTag, make([]byte, 3)),
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		e.readers.Add(1)
		go e.peers[1].readLoop()
		go func() {
			b.Write(data)
			b.Close()
		}()
		done := make(chan struct{})
		go func() { e.readers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("reader did not stop")
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20+4*uint64(len(data)) {
			t.Errorf("reading %d bytes allocated %d bytes", len(data), grew)
		}
		for _, r := range posted {
			r.Test() // completed, failed or pending: must not panic
		}
		a.Close()
	})
}

// rw is a scripted peer: reads come from in, writes are discarded.
type rw struct {
	in io.Reader
}

func (s rw) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s rw) Write(p []byte) (int, error) { return len(p), nil }

// FuzzHandshake plays arbitrary bytes as the other side of both roles of
// the handshake and of the hello and address-table messages: never a
// panic, never success without the token, no allocation driven by the input.
func FuzzHandshake(f *testing.F) {
	f.Add([]byte(authMagic + string(make([]byte, nonceSize+macSize+1))))
	f.Add([]byte("NETAWR01"))
	f.Add([]byte{})
	var hb bytes.Buffer
	writeHello(&hb, hello{rank: 1, size: 4, endpointAddr: endpointAddr{addr: "127.0.0.1:5000", local: "@netaware-x", machine: "boot/net:[1]"}})
	f.Add(hb.Bytes())
	var tb bytes.Buffer
	writeTable(&tb, []endpointAddr{{addr: "a:1"}, {addr: "b:2", local: "@l"}, {addr: "c:3", machine: "m"}, {addr: "d:4"}})
	f.Add(tb.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		token := []byte("fuzz-token")
		if err := serverHandshake(rw{bytes.NewReader(data)}, token); err == nil {
			t.Fatal("server accepted a scripted peer without the token")
		}
		if err := clientHandshake(rw{bytes.NewReader(data)}, token); err == nil {
			t.Fatal("client accepted a scripted peer without the token")
		}
		if h, err := readHello(bytes.NewReader(data), 4); err == nil && (h.rank < 0 || h.rank >= 4 || len(h.addr) > maxAddr || len(h.local) > maxAddr || len(h.machine) > maxAddr) {
			t.Fatalf("accepted hello %+v", h)
		}
		if addrs, err := readTable(bytes.NewReader(data), 4); err == nil && len(addrs) != 4 {
			t.Fatalf("accepted a table of %d", len(addrs))
		}
	})
}

func TestHandshakeMutual(t *testing.T) {
	run := func(clientTok, serverTok string) (cerr, serr error) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		a.SetDeadline(time.Now().Add(5 * time.Second))
		b.SetDeadline(time.Now().Add(5 * time.Second))
		ch := make(chan error, 1)
		go func() {
			err := serverHandshake(b, []byte(serverTok))
			if err != nil {
				b.Close()
			}
			ch <- err
		}()
		cerr = clientHandshake(a, []byte(clientTok))
		if cerr != nil {
			a.Close()
		}
		return cerr, <-ch
	}
	if c, s := run("same", "same"); c != nil || s != nil {
		t.Fatalf("same token: %v / %v", c, s)
	}
	if c, s := run("right", "wrong"); !errors.Is(c, ErrAuth) || s == nil {
		t.Fatalf("wrong server token: client %v, server %v", c, s)
	}
}
