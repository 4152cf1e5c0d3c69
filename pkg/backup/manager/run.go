package manager

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/backup/manager/command"
	"github.com/kubetidb/tidb-operator/pkg/backup/manager/summary"
)

// tailLines is how many last lines of a tool's output a failure message quotes.
const tailLines = 5

// toolResult is what a finished tool said: its summary lines (BR's) and its
// last lines.
type toolResult struct {
	summaries []string
	tail      []string
}

// lastSummary is the tool's last BR summary, if any.
func (r toolResult) lastSummary() (summary.Summary, bool) { return summary.Last(r.summaries) }

// failure is the tool's last lines, for a Failed condition's message.
func (r toolResult) failure() string { return strings.Join(r.tail, "\n") }

// runTool runs path with args, copying its stdout and stderr line by line to
// m.Out as they come, and keeping BR's summary lines and the last lines. It
// errors when the tool cannot start or exits non-zero.
func (m *Manager) runTool(ctx context.Context, path string, args []string) (toolResult, error) {
	m.logf("running %s %s", path, strings.Join(command.Redact(args), " "))
	cmd := exec.CommandContext(ctx, path, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		_ = pw.Close()
		return toolResult{}, fmt.Errorf("starting %s: %w", path, err)
	}
	done := make(chan toolResult, 1)
	go func() { done <- m.collect(pr) }()
	err := cmd.Wait()
	_ = pw.Close()
	res := <-done
	if err != nil {
		return res, fmt.Errorf("%s exited: %w", path, err)
	}
	return res, nil
}

// collect reads r to its end, echoing every line to m.Out.
func (m *Manager) collect(r io.Reader) toolResult {
	var res toolResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(m.Out, line)
		if _, ok := summary.Parse(line); ok {
			res.summaries = append(res.summaries, line)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		res.tail = append(res.tail, line)
		if len(res.tail) > tailLines {
			res.tail = res.tail[1:]
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return res
}
