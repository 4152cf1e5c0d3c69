package socks5

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"golang.org/x/net/proxy"
)

// echoServer answers each line with the line upper-cased.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					_, _ = io.WriteString(c, strings.ToUpper(line))
				}
			}()
		}
	}()
	return l.Addr().String()
}

// startServer serves SOCKS5 with only "db.ns.svc:4000" routed to backend.
func startServer(t *testing.T, backend string) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", func(host string, port int) (string, error) {
		if host == "db.ns.svc" && port == 4000 {
			return backend, nil
		}
		return "", fmt.Errorf("%s: %w", JoinTarget(host, port), ErrRefused)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func dialer(t *testing.T, s *Server) proxy.ContextDialer {
	t.Helper()
	d, err := proxy.SOCKS5("tcp", s.Addr(), nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	return d.(proxy.ContextDialer)
}

// TestConnectRouted: a CONNECT to a served name reaches the backend and
// carries data both ways.
func TestConnectRouted(t *testing.T) {
	t.Parallel()
	s := startServer(t, echoServer(t))
	c, err := dialer(t, s).DialContext(context.Background(), "tcp", "db.ns.svc:4000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, msg := range []string{"hello\n", "again\n"} {
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		got, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got != strings.ToUpper(msg) {
			t.Errorf("echo = %q, want %q", got, strings.ToUpper(msg))
		}
	}
}

// TestConnectRefused: targets the route does not serve (another port,
// another name, an IP) are refused and never dialed.
func TestConnectRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, echoServer(t))
	for _, target := range []string{"db.ns.svc:4001", "other.ns.svc:4000", "127.0.0.1:4000"} {
		_, err := dialer(t, s).DialContext(context.Background(), "tcp", target)
		if err == nil || !strings.Contains(err.Error(), "not allowed") {
			t.Errorf("dial %s: err %v, want a refusal (not allowed)", target, err)
		}
	}
}

// TestUnreachableBackend: a routed target whose backend is down gets
// "host unreachable".
func TestUnreachableBackend(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	_ = l.Close()
	s := startServer(t, down)
	_, err = dialer(t, s).DialContext(context.Background(), "tcp", "db.ns.svc:4000")
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("err %v, want host unreachable", err)
	}
}

// rawExchange sends b and returns the whole answer until the server closes.
func rawExchange(t *testing.T, s *Server, b []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
	return out
}

// TestProtocolRefusals: a client offering only username/password auth gets
// "no acceptable method"; BIND gets "command not supported"; an unknown
// address type gets "address type not supported".
func TestProtocolRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t, echoServer(t))
	cases := []struct {
		name string
		send []byte
		want []byte
	}{
		{"user/password only", []byte{5, 1, 0x02}, []byte{5, 0xff}},
		{"bind", []byte{5, 1, 0, 5, 0x02, 0, atypIPv4, 127, 0, 0, 1, 0x0f, 0xa0},
			[]byte{5, 0, 5, replyCommandUnsupported}},
		{"address type 9", []byte{5, 1, 0, 5, cmdConnect, 0, 9},
			[]byte{5, 0, 5, replyAddressUnsupported}},
	}
	for _, tc := range cases {
		got := rawExchange(t, s, tc.send)
		if len(got) < len(tc.want) || string(got[:len(tc.want)]) != string(tc.want) {
			t.Errorf("%s: answer % x, want prefix % x", tc.name, got, tc.want)
		}
	}
}

// TestCloseEndsConnections: Close ends an open tunnel and returns.
func TestCloseEndsConnections(t *testing.T) {
	t.Parallel()
	s := startServer(t, echoServer(t))
	c, err := dialer(t, s).DialContext(context.Background(), "tcp", "db.ns.svc:4000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("read after Close: %v", err)
	}
	if _, err := net.Dial("tcp", s.Addr()); err == nil {
		t.Error("the server still accepts after Close")
	}
}
