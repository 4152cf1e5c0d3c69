package backupschedule

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestNewBackupNameLabelsOwnerAndPrefix(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("UTC+8", 8*3600)) // 2026-03-03 21:06:07 UTC
	local := func(prefix string) *v1alpha1.LocalStorageProvider {
		return &v1alpha1.LocalStorageProvider{Prefix: prefix, Volume: corev1.Volume{Name: "nfs"}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.BackupSchedule)
		// prefix reads the resulting Backup's prefix (or path).
		prefix func(*v1alpha1.Backup) string
		want   string
	}{
		{name: "s3 prefix", prefix: func(b *v1alpha1.Backup) string { return b.Spec.S3.Prefix },
			want: "daily/basic-pd.ns1-2379-2026-03-03t21-06-07"},
		{name: "s3 path only", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.S3.Prefix, bs.Spec.BackupTemplate.S3.Path = "", "s3://bucket/p/"
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.S3.Path },
			want: "s3://bucket/p/basic-pd.ns1-2379-2026-03-03t21-06-07"},
		{name: "cluster namespace", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.BR.ClusterNamespace = "db"
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.S3.Prefix },
			want: "daily/basic-pd.db-2379-2026-03-03t21-06-07"},
		{name: "gcs without prefix", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.StorageProvider = v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{Bucket: "b"}}
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.Gcs.Prefix },
			want: "basic-pd.ns1-2379-2026-03-03t21-06-07"},
		{name: "azure", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.StorageProvider = v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Container: "c", Prefix: "x/"}}
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.Azblob.Prefix },
			want: "x/basic-pd.ns1-2379-2026-03-03t21-06-07"},
		{name: "local", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.StorageProvider = v1alpha1.StorageProvider{Local: local("backups")}
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.Local.Prefix },
			want: "backups/basic-pd.ns1-2379-2026-03-03t21-06-07"},
		{name: "storage and br inherited from the schedule", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.StorageProvider, bs.Spec.BR = bs.Spec.BackupTemplate.StorageProvider, bs.Spec.BackupTemplate.BR
			bs.Spec.BackupTemplate.StorageProvider, bs.Spec.BackupTemplate.BR = v1alpha1.StorageProvider{}, nil
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.S3.Prefix },
			want: "daily/basic-pd.ns1-2379-2026-03-03t21-06-07"},
		{name: "dumpling scratch volume inherited", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.BR = nil
			bs.Spec.StorageSize, bs.Spec.VolumeAttributesClassName = "10Gi", ptr.To("fast")
		}, prefix: func(b *v1alpha1.Backup) string {
			return b.Spec.StorageSize + " " + ptr.Deref(b.Spec.VolumeAttributesClassName, "")
		}, want: "10Gi fast"},
		{name: "dumpling keeps its prefix", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.BR = nil
		}, prefix: func(b *v1alpha1.Backup) string { return b.Spec.S3.Prefix }, want: "daily"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bs := newSchedule("@daily", epoch)
			bs.Labels = map[string]string{"team": "db", ScheduleLabelKey: "spoofed"}
			if tc.mutate != nil {
				tc.mutate(bs)
			}
			before := bs.DeepCopy()
			b := newBackup(bs, at)
			if b.Name != "bs-2026-03-03t21-06-07" || b.Namespace != "ns1" {
				t.Fatalf("name = %s/%s, want ns1/bs-2026-03-03t21-06-07", b.Namespace, b.Name)
			}
			if got := tc.prefix(b); got != tc.want {
				t.Fatalf("prefix = %q, want %q", got, tc.want)
			}
			wantLabels := map[string]string{"team": "db", "app.kubernetes.io/name": "backup-schedule",
				"app.kubernetes.io/managed-by": "backup-schedule-operator", "tidb.pingcap.com/backup-schedule": "bs"}
			if diff := cmp.Diff(wantLabels, b.Labels); diff != "" {
				t.Fatalf("labels (-want +got):\n%s", diff)
			}
			ref := b.OwnerReferences
			if len(ref) != 1 || ref[0].Kind != "BackupSchedule" || ref[0].UID != "bs-uid" || ref[0].Controller == nil || !*ref[0].Controller {
				t.Fatalf("ownerReferences = %+v, want the schedule as controller", ref)
			}
			if b.Spec.BackupType != "" || b.Spec.CleanPolicy != "" {
				t.Fatalf("defaults persisted into the Backup: %+v", b.Spec)
			}
			if diff := cmp.Diff(before, bs); diff != "" {
				t.Fatalf("newBackup modified the schedule (-before +after):\n%s", diff)
			}
		})
	}
}

func TestNewLogBackup(t *testing.T) {
	t.Parallel()
	bs := newSchedule("@daily", epoch)
	bs.Spec.LogBackupTemplate = bs.Spec.BackupTemplate.DeepCopy()
	bs.Spec.LogBackupTemplate.S3.Prefix = "log"
	b := newLogBackup(bs, epoch)
	if b.Name != "log-bs" || b.Spec.BackupMode != v1alpha1.BackupModeLog {
		t.Fatalf("log backup %s mode %q, want log-bs in mode log", b.Name, b.Spec.BackupMode)
	}
	if want := "log/basic-pd.ns1-2379-log-2026-01-01t00-00-00"; b.Spec.S3.Prefix != want {
		t.Fatalf("prefix = %q, want %q", b.Spec.S3.Prefix, want)
	}
	if b.Labels[ScheduleLabelKey] != "bs" {
		t.Fatalf("labels = %v, want the schedule label", b.Labels)
	}
}

func TestScheduledTime(t *testing.T) {
	t.Parallel()
	bs := newSchedule("@daily", epoch)
	if got, ok := scheduledTime(bs, "bs-2026-01-01t00-00-00"); !ok || !got.Equal(epoch) {
		t.Fatalf("scheduledTime = %v %v, want %v", got, ok, epoch)
	}
	for _, name := range []string{"other-2026-01-01t00-00-00", "bs-manual", "log-bs"} {
		if _, ok := scheduledTime(bs, name); ok {
			t.Fatalf("scheduledTime(%q) read a time", name)
		}
	}
}
