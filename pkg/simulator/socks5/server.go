// Package socks5 is a minimal SOCKS5 server (RFC 1928): CONNECT only, no
// authentication, IPv4, IPv6 and domain-name targets. A Route function
// decides where each requested target really goes, so the simulator can
// stand a local MySQL-protocol server in for every TiDB Service and pod and
// refuse anything else. Test and demo support only.
package socks5

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Protocol constants of RFC 1928.
const (
	version5        = 0x05
	methodNoAuth    = 0x00
	methodNoneFound = 0xff
	cmdConnect      = 0x01
	atypIPv4        = 0x01
	atypDomain      = 0x03
	atypIPv6        = 0x04

	replySucceeded          = 0x00
	replyGeneralFailure     = 0x01
	replyNotAllowed         = 0x02
	replyHostUnreachable    = 0x04
	replyCommandUnsupported = 0x07
	replyAddressUnsupported = 0x08
)

// handshakeTimeout bounds a client's greeting and request.
const handshakeTimeout = 10 * time.Second

// ErrRefused is what a Route returns for a target it does not serve; the
// client gets reply 0x02 (not allowed by ruleset).
var ErrRefused = errors.New("target not allowed")

// Route maps a requested target (host as the client sent it, and port) to
// the address to dial, or errors (ErrRefused for a target not served).
type Route func(host string, port int) (string, error)

// Server serves SOCKS5 on one listener until Close.
type Server struct {
	route    Route
	listener net.Listener
	dialer   net.Dialer
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
}

// Listen starts a server on addr (e.g. "127.0.0.1:0") routing through
// route. It errors when addr cannot be listened on.
func Listen(addr string, route Route) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("socks5 listen %s: %w", addr, err)
	}
	s := &Server{route: route, listener: l, dialer: net.Dialer{Timeout: 5 * time.Second},
		conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Close stops accepting, closes every open connection and waits for the
// connection handlers to end. It errors only when closing the listener does.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	err := s.listener.Close()
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("socks5 close: %w", err)
	}
	return nil
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.listener.Accept()
		if err != nil {
			return
		}
		if !s.track(c, true) {
			_ = c.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(c, false)
			defer func() { _ = c.Close() }()
			s.handle(c)
		}()
	}
}

// track adds or removes c from the open connections; it reports false when
// the server is closed.
func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.conns, c)
		return true
	}
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// handle runs one client: greeting, request, then both directions copied
// until either side closes.
func (s *Server) handle(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := negotiate(c); err != nil {
		return
	}
	host, port, code := readRequest(c)
	if code != replySucceeded {
		_ = writeReply(c, code)
		return
	}
	upstream, code := s.connect(host, port)
	if code != replySucceeded {
		_ = writeReply(c, code)
		return
	}
	defer func() { _ = upstream.Close() }()
	if !s.track(upstream, true) {
		return
	}
	defer s.track(upstream, false)
	if err := writeReply(c, replySucceeded); err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	pipe(c, upstream)
}

// connect routes and dials the target, returning the reply code to send.
func (s *Server) connect(host string, port int) (net.Conn, byte) {
	to, err := s.route(host, port)
	if errors.Is(err, ErrRefused) {
		return nil, replyNotAllowed
	}
	if err != nil {
		return nil, replyGeneralFailure
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.dialer.Timeout)
	defer cancel()
	upstream, err := s.dialer.DialContext(ctx, "tcp", to)
	if err != nil {
		return nil, replyHostUnreachable
	}
	return upstream, replySucceeded
}

// negotiate reads the greeting and accepts "no authentication" if offered.
func negotiate(c net.Conn) error {
	var head [2]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	if head[0] != version5 {
		return fmt.Errorf("greeting: version %d", head[0])
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return fmt.Errorf("greeting methods: %w", err)
	}
	for _, m := range methods {
		if m == methodNoAuth {
			_, err := c.Write([]byte{version5, methodNoAuth})
			return err
		}
	}
	_, _ = c.Write([]byte{version5, methodNoneFound})
	return errors.New("greeting: no acceptable method")
}

// readRequest reads a request and returns its target, or the reply code
// that refuses it.
func readRequest(c net.Conn) (string, int, byte) {
	var head [4]byte
	if _, err := io.ReadFull(c, head[:]); err != nil || head[0] != version5 {
		return "", 0, replyGeneralFailure
	}
	var host string
	switch head[3] {
	case atypIPv4, atypIPv6:
		ip := make(net.IP, map[byte]int{atypIPv4: 4, atypIPv6: 16}[head[3]])
		if _, err := io.ReadFull(c, ip); err != nil {
			return "", 0, replyGeneralFailure
		}
		host = ip.String()
	case atypDomain:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", 0, replyGeneralFailure
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", 0, replyGeneralFailure
		}
		host = string(name)
	default:
		return "", 0, replyAddressUnsupported
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return "", 0, replyGeneralFailure
	}
	if head[1] != cmdConnect {
		return "", 0, replyCommandUnsupported
	}
	return host, int(binary.BigEndian.Uint16(port[:])), replySucceeded
}

// writeReply sends a reply with the unspecified IPv4 address as the bound
// address (clients of a CONNECT do not use it).
func writeReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{version5, code, 0x00, atypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

// pipe copies both ways; when one direction ends, both connections close.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
	<-done
}

// JoinTarget formats a target the way Route receives it, for messages.
func JoinTarget(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
