package tcp

import (
	"context"
	"io"
	"net"
	"testing"

	"netaware/comm"
)

// Benchmarks against a raw Go TCP baseline on loopback: the same
// ping-pong and streaming patterns over a plain net.Conn with TCP_NODELAY.
// Compare with benchstat or by eye: ns/op of PingPongNetaware/X over
// PingPongRawTCP/X is the latency ratio, MB/s of StreamNetaware over
// StreamRawTCP the bandwidth ratio.

var benchSizes = []struct {
	name string
	n    int
}{{"1B", 1}, {"1KiB", 1 << 10}, {"1MiB", 1 << 20}}

func benchPair(b *testing.B) (c0, c1 comm.Comm, done func()) {
	eps := joinLoopback(b, context.Background(), 2, Config{})
	return comm.NewWorld(eps[0]), comm.NewWorld(eps[1]), func() {
		eps[0].Close()
		eps[1].Close()
	}
}

func rawPair(b *testing.B) (a, c net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- nil
			return
		}
		ch <- c
	}()
	a, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	c = <-ch
	if c == nil {
		b.Fatal("accept failed")
	}
	a.(*net.TCPConn).SetNoDelay(true)
	c.(*net.TCPConn).SetNoDelay(true)
	return a, c
}

// BenchmarkPingPongNetaware: one op is one round trip.
func BenchmarkPingPongNetaware(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			c0, c1, done := benchPair(b)
			defer done()
			ctx := context.Background()
			buf0, buf1 := make([]byte, sz.n), make([]byte, sz.n)
			errc := make(chan error, 1)
			b.SetBytes(int64(2 * sz.n))
			b.ResetTimer()
			go func() {
				for i := 0; i < b.N; i++ {
					if _, err := c1.Recv(ctx, 0, 0, buf1); err != nil {
						errc <- err
						return
					}
					if err := c1.Send(ctx, 0, 0, buf1); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			for i := 0; i < b.N; i++ {
				if err := c0.Send(ctx, 1, 0, buf0); err != nil {
					b.Fatal(err)
				}
				if _, err := c0.Recv(ctx, 1, 0, buf0); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkPingPongRawTCP(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			a, c := rawPair(b)
			defer a.Close()
			defer c.Close()
			buf0, buf1 := make([]byte, sz.n), make([]byte, sz.n)
			errc := make(chan error, 1)
			b.SetBytes(int64(2 * sz.n))
			b.ResetTimer()
			go func() {
				for i := 0; i < b.N; i++ {
					if _, err := io.ReadFull(c, buf1); err != nil {
						errc <- err
						return
					}
					if _, err := c.Write(buf1); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			for i := 0; i < b.N; i++ {
				if _, err := a.Write(buf0); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(a, buf0); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkStreamNetaware: one op is one 1 MiB message of a one-way
// stream; the receiver acknowledges the last one.
func BenchmarkStreamNetaware(b *testing.B) {
	const n = 1 << 20
	b.Run("1MiB", func(b *testing.B) {
		c0, c1, done := benchPair(b)
		defer done()
		ctx := context.Background()
		buf0, buf1 := make([]byte, n), make([]byte, n)
		errc := make(chan error, 1)
		b.SetBytes(n)
		b.ResetTimer()
		go func() {
			for i := 0; i < b.N; i++ {
				if _, err := c1.Recv(ctx, 0, 0, buf1); err != nil {
					errc <- err
					return
				}
			}
			errc <- c1.Send(ctx, 0, 1, buf1[:1])
		}()
		for i := 0; i < b.N; i++ {
			if err := c0.Send(ctx, 1, 0, buf0); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c0.Recv(ctx, 1, 1, buf0[:1]); err != nil {
			b.Fatal(err)
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkStreamRawTCP(b *testing.B) {
	const n = 1 << 20
	b.Run("1MiB", func(b *testing.B) {
		a, c := rawPair(b)
		defer a.Close()
		defer c.Close()
		buf0, buf1 := make([]byte, n), make([]byte, n)
		errc := make(chan error, 1)
		b.SetBytes(n)
		b.ResetTimer()
		go func() {
			for i := 0; i < b.N; i++ {
				if _, err := io.ReadFull(c, buf1); err != nil {
					errc <- err
					return
				}
			}
			_, err := c.Write(buf1[:1])
			errc <- err
		}()
		for i := 0; i < b.N; i++ {
			if _, err := a.Write(buf0); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := io.ReadFull(a, buf0[:1]); err != nil {
			b.Fatal(err)
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	})
}
