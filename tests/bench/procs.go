//go:build bench

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// Process is a child process the bench started, with its log file.
type Process struct {
	Name      string
	cmd       *exec.Cmd
	log       *os.File
	done      chan error
	closeOnce sync.Once
}

// StartProcess runs bin with args and env (added to a minimal environment)
// writing stdout and stderr to logPath. The child gets SIGTERM if the bench
// dies first.
func StartProcess(name, bin, logPath string, env []string, args ...string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, log: log, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// PID is the child's process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to this process (by its PID only), waits up to grace,
// then SIGKILLs it. Calling it again is a no-op.
func (p *Process) Stop(grace time.Duration) error {
	if exited, _ := p.Exited(); !exited {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			p.done <- err
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
			p.done <- <-p.done
		}
	}
	var err error
	p.closeOnce.Do(func() { err = p.log.Close() })
	return err
}

// ProcStat is what /proc says about a process's cost.
type ProcStat struct {
	// CPUSeconds is user + system CPU time so far.
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakRSSBytes is VmHWM, the resident set's high-water mark.
	PeakRSSBytes int64 `json:"peakRSSBytes"`
	// RSSBytes is VmRSS now.
	RSSBytes int64 `json:"rssBytes"`
}

// ReadProcStat reads /proc/<pid>/stat and /proc/<pid>/status.
func ReadProcStat(pid int) (ProcStat, error) {
	var st ProcStat
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, fmt.Errorf("read stat: %w", err)
	}
	// Fields after the command name (which may hold spaces) start after ')'.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return st, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14 of stat(5)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return st, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	st.CPUSeconds = float64(utime+stime) / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, fmt.Errorf("read status: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "VmHWM":
			st.PeakRSSBytes = kB(v)
		case "VmRSS":
			st.RSSBytes = kB(v)
		}
	}
	return st, nil
}

func kB(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n * 1024
}

// freeAddr returns 127.0.0.1:<a port free at the time of the call>.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}

// portFree reports whether nothing accepts connections on 127.0.0.1:port.
func portFree(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond)
	if err != nil {
		return true
	}
	_ = c.Close()
	return false
}

// localHTTP reaches the bench's own processes on loopback, never through a proxy.
var localHTTP = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}

// httpGet returns the status code and body of a plain GET to url.
func httpGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := localHTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// poll calls cond every interval until it returns true or an error, or ctx
// or the timeout ends; desc names the awaited condition in the error.
func poll(ctx context.Context, interval, timeout time.Duration, desc string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", desc, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not reached within %v", desc, timeout)
		case <-t.C:
		}
	}
}
