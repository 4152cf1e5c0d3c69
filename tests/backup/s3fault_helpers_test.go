//go:build integration

package backup

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// brHold is the stand-in br's hold point (STANDIN_BR_HOLD): a directory with
// the fifo "go" the stand-in blocks on after its first data file.
type brHold struct{ dir string }

// newHold makes the hold directory and its fifo.
func newHold(t *testing.T) *brHold {
	t.Helper()
	h := &brHold{dir: t.TempDir()}
	if err := syscall.Mkfifo(filepath.Join(h.dir, "go"), 0o600); err != nil {
		t.Fatalf("making the hold fifo: %v", err)
	}
	return h
}

// env is the Job env entry that makes the stand-in hold.
func (h *brHold) env() string { return "STANDIN_BR_HOLD=" + h.dir }

// waitStarted waits until the stand-in wrote its first data file and holds.
func (h *brHold) waitStarted(t *testing.T, ctx context.Context) {
	t.Helper()
	framework.WaitFor(t, ctx, jobTimeout, "the stand-in br holds mid-backup", func(context.Context) (bool, error) {
		_, err := os.Stat(filepath.Join(h.dir, "started"))
		return err == nil, nil
	})
}

// release lets the held stand-in go on.
func (h *brHold) release(t *testing.T) {
	t.Helper()
	fifo, err := os.OpenFile(filepath.Join(h.dir, "go"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("opening the hold fifo: %v", err)
	}
	_ = fifo.Close()
}

// jobResult is what a Job's command did.
type jobResult struct {
	code int
	out  string
}

// runJobAsync runs job's command (runJob) in the background.
func (f *jobFixture) runJobAsync(t *testing.T, job *batchv1.Job) <-chan jobResult {
	done := make(chan jobResult, 1)
	go func() {
		code, out := f.runJob(t, job)
		done <- jobResult{code, out}
	}()
	return done
}

// watchJobs watches the Jobs matching selector from now on and returns a
// function that stops the watch and lists the UIDs of every Job it saw, in order.
func (f *jobFixture) watchJobs(t *testing.T, selector string) func() []types.UID {
	t.Helper()
	w, err := f.env.Kube.BatchV1().Jobs(f.env.Namespace).Watch(f.env.Ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		uids []types.UID
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			mu.Lock()
			if j, ok := ev.Object.(*batchv1.Job); ok && !slices.Contains(uids, j.UID) {
				uids = append(uids, j.UID)
			}
			mu.Unlock()
		}
	}()
	var once sync.Once
	stop := func() []types.UID {
		once.Do(w.Stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(uids)
	}
	t.Cleanup(func() { stop() })
	return stop
}

// slowProxy is a loopback TCP proxy that holds every chunk a client sends
// for delay before passing it on to the backend.
type slowProxy struct {
	ln      net.Listener
	delay   time.Duration
	backend string
	delayed atomic.Int64 // chunks held so far
	wg      sync.WaitGroup
}

// startSlowProxy listens on a free 127.0.0.1 port in front of backend and
// stops (listener and every connection) at cleanup.
func startSlowProxy(t *testing.T, backend string, delay time.Duration) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowProxy{ln: ln, delay: delay, backend: backend}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.serve(c) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// endpoint is the proxy's URL.
func (p *slowProxy) endpoint() string { return "http://" + p.ln.Addr().String() }

// serve relays c to the backend, delaying what the client sends.
func (p *slowProxy) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	b, err := net.Dial("tcp", p.backend)
	if err != nil {
		return
	}
	defer func() { _ = b.Close() }()
	go func() { _, _ = io.Copy(c, b); _ = c.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.delayed.Add(1)
			time.Sleep(p.delay) // the fault: a slow server, not synchronisation
			if _, werr := b.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
