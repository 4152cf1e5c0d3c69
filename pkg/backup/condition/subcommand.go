package condition

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// The log backup subcommands that keep a status of their own.
const (
	logStart    v1alpha1.LogSubCommandType = "log-start"
	logStop     v1alpha1.LogSubCommandType = "log-stop"
	logTruncate v1alpha1.LogSubCommandType = "log-truncate"
	logPause    v1alpha1.LogSubCommandType = "log-pause"
	logResume   v1alpha1.LogSubCommandType = "log-resume"
)

// hasSubCommandStatus reports whether cmd keeps an entry in
// status.logSubCommandStatuses.
func hasSubCommandStatus(cmd v1alpha1.LogSubCommandType) bool {
	switch cmd {
	case logStart, logStop, logTruncate, logPause, logResume:
		return true
	}
	return false
}

// subCommandFinished reports whether t ends a run of a subcommand.
func subCommandFinished(t v1alpha1.BackupConditionType) bool {
	switch t {
	case v1alpha1.BackupComplete, v1alpha1.BackupFailed, v1alpha1.BackupStopped:
		return true
	}
	return false
}

// setSubCommandStatus records c (as subCondition translates it) in the
// status of its subcommand, as v1.6 does: c replaces the subcommand's
// condition of its type and becomes its phase; the first condition of a
// run (none before, or after a finished run or a Repeatable mark) restarts
// timeStarted and clears timeCompleted; Complete, Failed and Stopped set
// timeCompleted. A log-pause change marks an existing log-resume status
// Repeatable, and the other way round, so the next one runs again. It
// reports whether st changed; conditions without a log subcommand write
// nothing.
func setSubCommandStatus(st *v1alpha1.BackupStatus, c v1alpha1.BackupCondition, now metav1.Time) bool {
	c, ok := subCondition(c)
	if !ok {
		return false
	}
	if st.LogSubCommandStatuses == nil {
		st.LogSubCommandStatuses = map[v1alpha1.LogSubCommandType]v1alpha1.LogSubCommandStatus{}
	}
	sub := st.LogSubCommandStatuses[c.Command]
	before := sub.DeepCopy()
	sub.Command = c.Command
	fresh := sub.TimeStarted.IsZero() || subCommandFinished(sub.Phase) || sub.Phase == v1alpha1.BackupRepeatable
	if fresh && sub.Phase != c.Type {
		sub.TimeStarted, sub.TimeCompleted = now, metav1.Time{}
	}
	if subCommandFinished(c.Type) && sub.Phase != c.Type {
		sub.TimeCompleted = now
	}
	sub.Phase = c.Type
	replaceCondition(&sub.Conditions, c, now)
	changed := !equalSubCommandStatus(before, &sub)
	st.LogSubCommandStatuses[c.Command] = sub
	if other := oppositeOf(c.Command); other != "" {
		changed = markRepeatable(st, other) || changed
	}
	return changed
}

// SetLogTruncatingUntil records in the log-truncate status the TSO a
// truncate run is for; it reports whether st changed.
func SetLogTruncatingUntil(st *v1alpha1.BackupStatus, until string) bool {
	sub := st.LogSubCommandStatuses[logTruncate]
	if sub.LogTruncatingUntil == until && sub.Command == logTruncate {
		return false
	}
	if st.LogSubCommandStatuses == nil {
		st.LogSubCommandStatuses = map[v1alpha1.LogSubCommandType]v1alpha1.LogSubCommandStatus{}
	}
	sub.Command, sub.LogTruncatingUntil = logTruncate, until
	st.LogSubCommandStatuses[logTruncate] = sub
	return true
}

// subCondition is c as the status of its subcommand records it, and
// whether it is recorded there at all: only conditions of a log
// subcommand are, and of those only True ones and failures. A failure is
// True there (the whole status keeps a pause's or resume's failure False
// so that it does not fail the Backup), and the Paused that ends a
// log-pause or the Running that ends a log-resume is its Complete.
func subCondition(c v1alpha1.BackupCondition) (v1alpha1.BackupCondition, bool) {
	if !hasSubCommandStatus(c.Command) {
		return c, false
	}
	if c.Type == v1alpha1.BackupFailed {
		c.Status = corev1.ConditionTrue
	}
	if c.Status != corev1.ConditionTrue {
		return c, false
	}
	if (c.Command == logPause && c.Type == BackupPaused) || (c.Command == logResume && c.Type == v1alpha1.BackupRunning) {
		c.Type = v1alpha1.BackupComplete
	}
	return c, true
}

// MarkSubCommandScheduled records in st that a run of cmd was scheduled
// (its Job created) without touching the whole Backup's phase or
// conditions, as pause and resume need; it reports whether st changed.
func MarkSubCommandScheduled(st *v1alpha1.BackupStatus, cmd v1alpha1.LogSubCommandType, reason, message string, now metav1.Time) bool {
	return setSubCommandStatus(st, v1alpha1.BackupCondition{Command: cmd, Type: v1alpha1.BackupScheduled,
		Status: corev1.ConditionTrue, Reason: reason, Message: message}, now)
}

// oppositeOf is log-resume for log-pause and log-pause for log-resume.
func oppositeOf(cmd v1alpha1.LogSubCommandType) v1alpha1.LogSubCommandType {
	switch cmd {
	case logPause:
		return logResume
	case logResume:
		return logPause
	}
	return ""
}

// markRepeatable sets the phase of cmd's existing status to Repeatable.
func markRepeatable(st *v1alpha1.BackupStatus, cmd v1alpha1.LogSubCommandType) bool {
	sub, ok := st.LogSubCommandStatuses[cmd]
	if !ok || sub.Phase == v1alpha1.BackupRepeatable {
		return false
	}
	sub.Phase = v1alpha1.BackupRepeatable
	st.LogSubCommandStatuses[cmd] = sub
	return true
}

// replaceCondition replaces the condition of c.Type in conds (or appends
// it), keeping LastTransitionTime while the Status stays.
func replaceCondition(conds *[]v1alpha1.BackupCondition, c v1alpha1.BackupCondition, now metav1.Time) {
	for i, old := range *conds {
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime = now
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		(*conds)[i] = c
		return
	}
	c.LastTransitionTime = now
	*conds = append(*conds, c)
}

// equalSubCommandStatus compares two subcommand statuses field by field.
func equalSubCommandStatus(a, b *v1alpha1.LogSubCommandStatus) bool {
	if a.Command != b.Command || !a.TimeStarted.Equal(&b.TimeStarted) || !a.TimeCompleted.Equal(&b.TimeCompleted) ||
		a.LogTruncatingUntil != b.LogTruncatingUntil || a.Phase != b.Phase || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i] != b.Conditions[i] {
			return false
		}
	}
	return true
}
