package manager

import (
	"errors"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

func TestCheckpointOf(t *testing.T) {
	t.Parallel()
	lines := []string{"Detail BR log in /tmp/br.log", `[{"name":"other","status":"NORMAL","checkpoint":7},{"name":"lb","status":"NORMAL","checkpoint":450000000000000002}]`}
	if got, err := checkpointOf(lines, "lb"); err != nil || got != 450000000000000002 {
		t.Errorf("checkpointOf = %d, %v", got, err)
	}
	if _, err := checkpointOf(lines, "gone"); err == nil {
		t.Error("a missing task gave a checkpoint")
	}
	if _, err := checkpointOf(lines[:1], "lb"); err == nil {
		t.Error("output without JSON gave a checkpoint")
	}
	if _, err := checkpointOf([]string{"[not json"}, "lb"); err == nil {
		t.Error("garbage gave a checkpoint")
	}
}

func TestPauseResumeStatus(t *testing.T) {
	t.Parallel()
	b := s3Backup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	tool := script(t, `case "$2" in
status) echo '[{"name":"b1","status":"NORMAL","checkpoint":450000000000000009}]' ;;
resume) if [ -f "$0.fail" ]; then echo "task not found"; exit 1; fi ;;
esac`)
	m, out := newTestManager(t, newFakeBucket(map[string]int64{}), tool, b)
	m.Opts.Mode = "log"
	step := func(sub string) *v1alpha1.Backup {
		t.Helper()
		m.Opts.Subcommand = sub
		if err := m.Backup(t.Context()); err != nil {
			t.Fatalf("%s: %v\n%s", sub, err, out)
		}
		return getBackup(t, m)
	}
	step("log-start")
	if got := step("log-pause"); got.Status.Phase != condition.BackupPaused {
		t.Fatalf("after pause: %+v", got.Status)
	}
	got := step("log-resume")
	if got.Status.Phase != v1alpha1.BackupRunning || condition.IsBackupPaused(got) {
		t.Fatalf("after resume: %+v", got.Status)
	}
	got = step("log-status")
	if got.Status.LogCheckpointTs != "450000000000000009" {
		t.Fatalf("logCheckpointTs = %q", got.Status.LogCheckpointTs)
	}
	if got.Status.TimeSynced == nil {
		t.Fatalf("timeSynced not written with the checkpoint: %+v", got.Status)
	}
	// Every read is recorded in timeSynced, as v1.6's tracker does, even
	// when the checkpoint did not move.
	if again := step("log-status"); again.Status.LogCheckpointTs != got.Status.LogCheckpointTs || again.Status.TimeSynced == nil ||
		!again.Status.TimeSynced.After(got.Status.TimeSynced.Time) {
		t.Errorf("a second read: checkpoint %q timeSynced %v, want %q and later than %v",
			again.Status.LogCheckpointTs, again.Status.TimeSynced, got.Status.LogCheckpointTs, got.Status.TimeSynced)
	}
	step("log-pause")
	paused := getBackup(t, m)
	if held := step("log-status"); !held.Status.TimeSynced.Equal(paused.Status.TimeSynced) {
		t.Errorf("a paused backup's timeSynced moved: %v → %v", paused.Status.TimeSynced, held.Status.TimeSynced)
	}
	step("log-resume")

	if err := os.WriteFile(tool+".fail", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m.Opts.Subcommand = "log-resume"
	if err := m.Backup(t.Context()); !errors.Is(err, ErrFailed) {
		t.Fatalf("a failed resume = %v, want ErrFailed", err)
	}
	got = getBackup(t, m)
	fc := condition.GetBackupCondition(&got.Status, v1alpha1.BackupFailed)
	if fc == nil || fc.Status != corev1.ConditionFalse || fc.Reason != ReasonResumeLogFailed || got.Status.Phase != v1alpha1.BackupRunning {
		t.Errorf("after a failed resume: %+v", got.Status)
	}
}
