// Package compactstatus is the one writer of a CompactBackup's status,
// shared by the CompactBackup controller and `backup-manager compact`
// (v1.6's CompactStatusUpdater): an Update names what changed, Apply merges
// it by v1.6's field rules, and Write applies it to the live object
// through the status subresource, retrying conflicts.
package compactstatus

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// Update is one change of a CompactBackup's status; zero fields change nothing.
type Update struct {
	// State replaces the state when set and different; Prepare never
	// replaces Running, Complete or Failed (see latePrepare).
	State v1alpha1.CompactState
	// Message replaces the message when set and different.
	Message string
	// Progress replaces the progress when set.
	Progress string
	// EndTs replaces the reached TSO when it is greater (as a number).
	EndTs string
	// Retry, when set, is appended as the next record only when its
	// RetryNum is the number of records so far, so writing it twice adds
	// it once.
	Retry *v1alpha1.CompactRetryRecord
}

// Apply merges u into st and reports whether st changed. Pure.
func Apply(st *v1alpha1.CompactStatus, u Update) bool {
	changed := false
	if u.State != "" && u.State != st.State && !latePrepare(u.State, st.State) {
		st.State, changed = u.State, true
	}
	if u.Message != "" && u.Message != st.Message {
		st.Message, changed = u.Message, true
	}
	if u.Progress != "" && u.Progress != st.Progress {
		st.Progress, changed = u.Progress, true
	}
	// v1.6 compares the strings; a TSO's digits compare the same way only at
	// equal length, so the numbers are compared here.
	if u.EndTs != "" && greaterTSO(u.EndTs, st.EndTs) {
		st.EndTs, changed = u.EndTs, true
	}
	if r := u.Retry; r != nil && r.RetryNum == len(st.BackoffRetryStatus) {
		st.BackoffRetryStatus, changed = append(st.BackoffRetryStatus, *r), true
	}
	return changed
}

// latePrepare reports a Prepare (the controller's record that it created
// the Job) arriving after the Job's process already reported Running,
// Complete or Failed: it must not roll the state back. The controller's
// write races the Job's own when the Job starts at once. (Prepare does
// replace RetryFailed: a Job created again after a failed create.)
func latePrepare(next, cur v1alpha1.CompactState) bool {
	return next == v1alpha1.CompactPrepare &&
		(cur == v1alpha1.CompactRunning || cur == v1alpha1.CompactComplete || cur == v1alpha1.CompactFailed)
}

// greaterTSO reports whether a is a greater TSO than b (any TSO is greater
// than an empty or unreadable b).
func greaterTSO(a, b string) bool {
	x, err := v1alpha1.ParseTSO(a)
	if err != nil {
		return false
	}
	y, err := v1alpha1.ParseTSO(b)
	return err != nil || x > y
}

// NextRetry is the record of a failure of cb's compaction seen at now for
// reason: the next retry number.
func NextRetry(st *v1alpha1.CompactStatus, now metav1.Time, reason string) *v1alpha1.CompactRetryRecord {
	return &v1alpha1.CompactRetryRecord{RetryNum: len(st.BackoffRetryStatus), DetectFailedAt: now, RetryReason: reason}
}

// Write applies u to the live CompactBackup ns/name through the status
// subresource, reading it again after a conflict, and returns the object
// as written (or as read, when u changes nothing). It errors when the
// object cannot be read or written; NotFound is returned as is.
func Write(ctx context.Context, client versioned.Interface, ns, name string, u Update) (*v1alpha1.CompactBackup, error) {
	var out *v1alpha1.CompactBackup
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cb, err := client.PingcapV1alpha1().CompactBackups(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !Apply(&cb.Status, u) {
			out = cb
			return nil
		}
		out, err = client.PingcapV1alpha1().CompactBackups(ns).UpdateStatus(ctx, cb, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("write the status of CompactBackup %s/%s: %w", ns, name, err)
	}
	return out, nil
}
