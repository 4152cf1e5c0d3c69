package defaulting

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

var defaultRetry = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "300s", MaxRetryTimes: 2, RetryTimeout: "30m"}

func TestSetBackupDefaults(t *testing.T) {
	t.Parallel()
	userSpec := v1alpha1.BackupSpec{
		BackupMode: v1alpha1.BackupModeSnapshot, BackupType: v1alpha1.BackupTypeDB, CleanPolicy: v1alpha1.CleanPolicyTypeDelete,
		BackoffRetryPolicy: v1alpha1.BackoffRetryPolicy{MinRetryDuration: "1s", MaxRetryTimes: 9, RetryTimeout: "1h"},
	}
	cases := []struct {
		name string
		in   *v1alpha1.Backup
		want *v1alpha1.Backup
	}{
		{name: "nil backup", in: nil, want: nil},
		{
			name: "empty spec is a full snapshot backup with retries",
			in:   &v1alpha1.Backup{},
			want: &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{
				BackupMode: v1alpha1.BackupModeSnapshot, BackupType: v1alpha1.BackupTypeFull,
				CleanPolicy: v1alpha1.CleanPolicyTypeRetain, BackoffRetryPolicy: defaultRetry,
			}},
		},
		{
			name: "log backup gets no retry policy",
			in:   &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{BackupMode: v1alpha1.BackupModeLog}},
			want: &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{
				BackupMode: v1alpha1.BackupModeLog, BackupType: v1alpha1.BackupTypeFull, CleanPolicy: v1alpha1.CleanPolicyTypeRetain,
			}},
		},
		{
			name: "partial retry policy is completed field by field",
			in:   &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{BackoffRetryPolicy: v1alpha1.BackoffRetryPolicy{RetryTimeout: "2h"}}},
			want: &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{
				BackupMode: v1alpha1.BackupModeSnapshot, BackupType: v1alpha1.BackupTypeFull, CleanPolicy: v1alpha1.CleanPolicyTypeRetain,
				BackoffRetryPolicy: v1alpha1.BackoffRetryPolicy{MinRetryDuration: "300s", MaxRetryTimes: 2, RetryTimeout: "2h"},
			}},
		},
		{
			name: "does not overwrite user values",
			in:   &v1alpha1.Backup{Spec: userSpec},
			want: &v1alpha1.Backup{Spec: userSpec},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := c.in.DeepCopy()
			SetBackupDefaults(got)
			if diff := cmp.Diff(c.want, got, cmpOpts); diff != "" {
				t.Errorf("SetBackupDefaults() mismatch (-want +got):\n%s", diff)
			}
			again := got.DeepCopy()
			SetBackupDefaults(again)
			if diff := cmp.Diff(got, again, cmpOpts); diff != "" {
				t.Errorf("SetBackupDefaults() is not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestSetRestoreDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   *v1alpha1.Restore
		want *v1alpha1.Restore
	}{
		{name: "nil restore", in: nil, want: nil},
		{name: "empty mode is snapshot", in: &v1alpha1.Restore{}, want: &v1alpha1.Restore{Spec: v1alpha1.RestoreSpec{Mode: v1alpha1.RestoreModeSnapshot}}},
		{
			name: "does not overwrite pitr",
			in:   &v1alpha1.Restore{Spec: v1alpha1.RestoreSpec{Mode: v1alpha1.RestoreModePiTR}},
			want: &v1alpha1.Restore{Spec: v1alpha1.RestoreSpec{Mode: v1alpha1.RestoreModePiTR}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := c.in.DeepCopy()
			SetRestoreDefaults(got)
			SetRestoreDefaults(got) // idempotent
			if diff := cmp.Diff(c.want, got, cmpOpts); diff != "" {
				t.Errorf("SetRestoreDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetBackupScheduleDefaults(t *testing.T) {
	t.Parallel()
	snapshot := v1alpha1.BackupSpec{
		BackupMode: v1alpha1.BackupModeSnapshot, BackupType: v1alpha1.BackupTypeFull,
		CleanPolicy: v1alpha1.CleanPolicyTypeRetain, BackoffRetryPolicy: defaultRetry,
	}
	cases := []struct {
		name string
		in   *v1alpha1.BackupSchedule
		want *v1alpha1.BackupSchedule
	}{
		{name: "nil schedule", in: nil, want: nil},
		{
			name: "backup template defaulted",
			in:   &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{Schedule: "@daily"}},
			want: &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{Schedule: "@daily", BackupTemplate: snapshot}},
		},
		{
			name: "log template is a log backup",
			in:   &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{LogBackupTemplate: &v1alpha1.BackupSpec{}}},
			want: &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{
				BackupTemplate: snapshot,
				LogBackupTemplate: &v1alpha1.BackupSpec{
					BackupMode: v1alpha1.BackupModeLog, BackupType: v1alpha1.BackupTypeFull, CleanPolicy: v1alpha1.CleanPolicyTypeRetain,
				},
			}},
		},
		{
			name: "does not overwrite user values",
			in: &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{
				BackupTemplate: v1alpha1.BackupSpec{BackupMode: v1alpha1.BackupModeVolumeSnapshot, BackupType: v1alpha1.BackupTypeRaw, CleanPolicy: v1alpha1.CleanPolicyTypeOnFailure},
			}},
			want: &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{
				BackupTemplate: v1alpha1.BackupSpec{BackupMode: v1alpha1.BackupModeVolumeSnapshot, BackupType: v1alpha1.BackupTypeRaw, CleanPolicy: v1alpha1.CleanPolicyTypeOnFailure},
			}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := c.in.DeepCopy()
			SetBackupScheduleDefaults(got)
			SetBackupScheduleDefaults(got) // idempotent
			if diff := cmp.Diff(c.want, got, cmpOpts); diff != "" {
				t.Errorf("SetBackupScheduleDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
