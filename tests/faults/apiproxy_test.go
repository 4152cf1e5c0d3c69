//go:build integration

package faults

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/clientcmd"
)

// tcpProxy forwards TCP connections from a loopback port to the kube-apiserver, so a scenario can cut
// every connection of the operator (its watches included) at once and force its informers to relist.
// It forwards bytes, TLS included: the operator still talks to the real apiserver.
type tcpProxy struct {
	ln     net.Listener
	target string
	cuts   atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startTCPProxy(target string) (*tcpProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	return p, nil
}

func (p *tcpProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.track(in, out)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *tcpProxy) track(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
}

func (p *tcpProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut closes every open connection and returns how many it closed; new connections are accepted.
func (p *tcpProxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
		n++
	}
	p.cuts.Add(1)
	return n
}

// open is how many connections (both sides) are open now.
func (p *tcpProxy) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *tcpProxy) Close() error { p.cut(); return p.ln.Close() }

// proxiedKubeconfig writes a copy of the kubeconfig at src into dir whose servers point at the
// proxy, and returns its path and the apiserver address the proxy must forward to.
func proxiedKubeconfig(src, dir string, proxy func(target string) (string, error)) (string, error) {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return "", fmt.Errorf("load kubeconfig: %w", err)
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			return "", fmt.Errorf("server URL %q: %w", c.Server, err)
		}
		addr, err := proxy(u.Host)
		if err != nil {
			return "", err
		}
		u.Host = addr
		c.Server = u.String()
	}
	path := filepath.Join(dir, "kubeconfig-proxied")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, os.Chmod(path, 0o600)
}
