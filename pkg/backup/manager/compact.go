package manager

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/compactstatus"
	"github.com/kubetidb/tidb-operator/pkg/backup/manager/command"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// DefaultTiKVCtlPath is where the Job's `tikv-ctl` init container copies tikv-ctl.
const DefaultTiKVCtlPath = "/var/lib/kvctl-bin/tikv-ctl"

// progressInterval is how often, at most, a compaction's progress is
// written (v1.6's debounce); a state change and the end of the run write it
// at once.
const progressInterval = 3 * time.Second

// Event reasons of `compact` (v1.6's, on the CompactBackup).
const (
	ReasonCompactStarted  = "Started"
	ReasonCompactFinished = "Finished"
	ReasonCompactFailed   = "Failed"
)

// Compact runs `compact`: it reads its CompactBackup, turns the storage
// into tikv-ctl's base64 backend with `br operator base64ify`, runs
// `tikv-ctl compact-log-backup` over [startTs, endTs], writes Running, the
// progress and the reached endTs as tikv-ctl logs them, and finally
// Complete, or RetryFailed with the error and a retry record (the Job's
// OnFailure restart then runs it again; its controller writes Failed once
// the Job gives up). A CompactBackup already Complete or Failed is left
// alone. It errors when the CR cannot be read, or (wrapping ErrFailed) when
// the compaction failed.
func (m *Manager) Compact(ctx context.Context) (err error) {
	cb, err := m.Client.PingcapV1alpha1().CompactBackups(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading compactbackup %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	if st := cb.Status.State; st == v1alpha1.CompactComplete || st == v1alpha1.CompactFailed {
		m.logf("compactbackup %s/%s already finished (%s); nothing to do", cb.Namespace, cb.Name, st)
		return nil
	}
	defer func() { err = m.finishCompact(ctx, cb, err) }()
	from, until, err := compactRange(&cb.Spec)
	if err != nil {
		return err
	}
	loc, err := storage.LocationOf(cb.Spec.StorageProvider)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	b64, err := m.base64ify(ctx, loc)
	if err != nil {
		return err
	}
	return m.runCompaction(ctx, cb, command.CompactLogBackup(b64, from, until, cb.Spec.Concurrency))
}

// compactRange parses startTs and endTs as TSOs and checks the range and
// the concurrency.
func compactRange(s *v1alpha1.CompactSpec) (uint64, uint64, error) {
	from, err := v1alpha1.ParseTSO(s.StartTs)
	if err != nil {
		return 0, 0, fmt.Errorf("start-ts: %w", err)
	}
	until, err := v1alpha1.ParseTSO(s.EndTs)
	if err != nil {
		return 0, 0, fmt.Errorf("end-ts: %w", err)
	}
	if until < from {
		return 0, 0, fmt.Errorf("until-ts %d must be greater than from-ts %d", until, from)
	}
	if s.Concurrency <= 0 {
		return 0, 0, fmt.Errorf("concurrency %d must be greater than 0", s.Concurrency)
	}
	return from, until, nil
}

// base64ify runs `br operator base64ify` and returns the backend it prints.
func (m *Manager) base64ify(ctx context.Context, loc storage.Location) (string, error) {
	args := command.Base64ify(loc)
	m.logf("running %s %s", m.brPath(), strings.Join(command.Redact(args), " "))
	cmd := exec.CommandContext(ctx, m.brPath(), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("br operator base64ify: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	// The backend is the last line BR prints on stdout (anything before it
	// is BR's chatter, such as where its log goes).
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	b64 := strings.TrimSpace(lines[len(lines)-1])
	if b64 == "" {
		return "", errors.New("br operator base64ify printed no storage backend")
	}
	return b64, nil
}

// runCompaction runs tikv-ctl with args, writes Running once it started,
// and follows its stderr (tee'd to m.Out) until it ends or aborts.
func (m *Manager) runCompaction(ctx context.Context, cb *v1alpha1.CompactBackup, args []string) error {
	path := m.tikvCtlPath()
	m.logf("running %s %s", path, strings.Join(args, " "))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	// tikv-ctl's stdout is copied by exec's goroutine while this one copies
	// its stderr: both go through one lock.
	out := &lockedWriter{w: m.Out}
	cmd.Stdout = out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("tikv-ctl stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	if _, err := compactstatus.Write(ctx, m.Client, cb.Namespace, cb.Name, compactstatus.Update{State: v1alpha1.CompactRunning}); err != nil {
		cancel()
		_ = cmd.Wait()
		return err
	}
	m.compactEvent(ctx, cb, corev1.EventTypeNormal, ReasonCompactStarted, "The compaction process has started successfully.")
	followErr := m.followCompaction(ctx, cb, stderr, out)
	if followErr != nil {
		cancel() // kills tikv-ctl, as v1.6 does on an abort or an unreadable line
		_, _ = io.Copy(io.Discard, stderr)
	}
	waitErr := cmd.Wait()
	if followErr != nil {
		return followErr
	}
	if waitErr != nil {
		return fmt.Errorf("%s exited: %w", path, waitErr)
	}
	return nil
}

// followCompaction reads tikv-ctl's JSON log from r: it tracks the greatest
// input_max_ts, writes progress (at most every progressInterval) and, at
// the end of the stream, the last progress and the reached endTs. An abort
// or an undecodable line is returned. Every line is copied to out.
func (m *Manager) followCompaction(ctx context.Context, cb *v1alpha1.CompactBackup, r io.Reader, out io.Writer) error {
	var (
		maxTs        uint64
		last         string
		lastWrite    time.Time
		writtenFinal bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		_, _ = fmt.Fprintln(out, string(line))
		ev, err := parseCompactLine(line)
		switch {
		case err != nil:
			return err
		case ev.aborted != "":
			return fmt.Errorf("compaction aborted: %s", ev.aborted)
		case ev.maxTs > maxTs:
			maxTs = ev.maxTs
		case ev.progress != nil:
			last, writtenFinal = ev.progress.String(), false
			if now := m.now(); now.Sub(lastWrite) >= progressInterval {
				if _, err := compactstatus.Write(ctx, m.Client, cb.Namespace, cb.Name, compactstatus.Update{Progress: last}); err != nil {
					return err
				}
				lastWrite, writtenFinal = now, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading tikv-ctl's log: %w", err)
	}
	u := compactstatus.Update{}
	if !writtenFinal {
		u.Progress = last
	}
	if maxTs > 0 {
		u.EndTs = strconv.FormatUint(maxTs, 10)
	}
	_, err := compactstatus.Write(ctx, m.Client, cb.Namespace, cb.Name, u)
	return err
}

// finishCompact writes the outcome of a run: Complete (and the Finished
// event) for a nil runErr, else RetryFailed with the error and the next
// retry record, returning runErr wrapped in ErrFailed.
func (m *Manager) finishCompact(ctx context.Context, cb *v1alpha1.CompactBackup, runErr error) error {
	if runErr == nil {
		if _, err := compactstatus.Write(ctx, m.Client, cb.Namespace, cb.Name, compactstatus.Update{State: v1alpha1.CompactComplete}); err != nil {
			return err
		}
		m.compactEvent(ctx, cb, corev1.EventTypeNormal, ReasonCompactFinished, "The compaction process has finished successfully.")
		return nil
	}
	m.logf("compactbackup %s/%s failed: %v", cb.Namespace, cb.Name, runErr)
	m.compactEvent(ctx, cb, corev1.EventTypeWarning, ReasonCompactFailed, runErr.Error())
	// The retry's number comes from the live status, so that a record the
	// controller or an earlier run added is counted.
	live, err := m.Client.PingcapV1alpha1().CompactBackups(cb.Namespace).Get(ctx, cb.Name, metav1.GetOptions{})
	if err == nil {
		_, err = compactstatus.Write(ctx, m.Client, cb.Namespace, cb.Name, compactstatus.Update{
			State: v1alpha1.CompactRetryFailed, Message: runErr.Error(),
			Retry: compactstatus.NextRetry(&live.Status, metav1.NewTime(m.now()), runErr.Error())})
	}
	if err != nil {
		return errors.Join(fmt.Errorf("%w: %w", ErrFailed, runErr), err)
	}
	return fmt.Errorf("%w: %w", ErrFailed, runErr)
}

// compactEvent records an event on cb, as the Job's compact-manager; a
// failure to record is only logged.
func (m *Manager) compactEvent(ctx context.Context, cb *v1alpha1.CompactBackup, typ, reason, msg string) {
	if m.Kube == nil {
		return
	}
	now := metav1.NewTime(m.now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: cb.Namespace,
			Name: fmt.Sprintf("%s.%s.%x", cb.Name, strings.ToLower(reason), now.UnixNano())},
		InvolvedObject: corev1.ObjectReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "CompactBackup",
			Namespace: cb.Namespace, Name: cb.Name, UID: cb.UID, ResourceVersion: cb.ResourceVersion},
		Reason: reason, Message: msg, Type: typ, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source: corev1.EventSource{Component: "compact-manager"},
	}
	if _, err := m.Kube.CoreV1().Events(cb.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		m.logf("recording event %s on compactbackup %s/%s: %v", reason, cb.Namespace, cb.Name, err)
	}
}

// tikvCtlPath is --tikv-ctl-path, else the init container's copy when
// present, else tikv-ctl from PATH.
func (m *Manager) tikvCtlPath() string {
	if m.Opts.TiKVCtlPath != "" {
		return m.Opts.TiKVCtlPath
	}
	if _, err := os.Stat(DefaultTiKVCtlPath); err == nil {
		return DefaultTiKVCtlPath
	}
	return toolPath("", "tikv-ctl")
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p to w under the lock.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
