package backupschedule

import (
	"maps"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// Labels and values of the Backups a schedule creates (spec §9).
const (
	// ScheduleLabelKey names the schedule a Backup was created by.
	ScheduleLabelKey = "tidb.pingcap.com/backup-schedule"
	// NameLabelValue is the app.kubernetes.io/name of created Backups.
	NameLabelValue = "backup-schedule"
	// ManagedByLabelValue is the app.kubernetes.io/managed-by of created Backups.
	ManagedByLabelValue = "backup-schedule-operator"
	// TimeFormat formats the scheduled time (UTC) in created Backups' names
	// and storage prefixes.
	TimeFormat = "2006-01-02t15-04-05"
	// pdClientPort is the PD client port in the storage prefix BR backups get.
	pdClientPort = "2379"
)

// backupName returns the name of the snapshot Backup bs creates for the
// scheduled time at: "<bs>-<at in UTC as TimeFormat>".
func backupName(bs *v1alpha1.BackupSchedule, at time.Time) string {
	return bs.Name + "-" + at.UTC().Format(TimeFormat)
}

// logBackupName returns the name of bs's log backup: "log-<bs>".
func logBackupName(bs *v1alpha1.BackupSchedule) string { return "log-" + bs.Name }

// scheduledTime returns the scheduled time encoded in the name of a Backup bs
// created, or false when name is not "<bs>-<TimeFormat>".
func scheduledTime(bs *v1alpha1.BackupSchedule, name string) (time.Time, bool) {
	suffix, ok := strings.CutPrefix(name, bs.Name+"-")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(TimeFormat, suffix, time.UTC)
	return t, err == nil
}

// newBackup builds the snapshot Backup bs owes for the scheduled time at:
// named by backupName, its spec the (undefaulted) backupTemplate completed
// by the schedule-level storage provider and BR config (inheritSchedule),
// with a BR backup's storage prefix extended by brPrefix so that every
// Backup writes to its own folder. Labels and owner: see newChildMeta. Pure.
func newBackup(bs *v1alpha1.BackupSchedule, at time.Time) *v1alpha1.Backup {
	spec := inheritSchedule(&bs.Spec, &bs.Spec.BackupTemplate)
	if spec.BR != nil {
		appendPrefix(&spec.StorageProvider, brPrefix(bs, spec.BR, "", at))
	}
	return &v1alpha1.Backup{ObjectMeta: newChildMeta(bs, backupName(bs, at)), Spec: *spec}
}

// newLogBackup builds bs's log backup "log-<bs>" from logBackupTemplate (see
// newBackup), with backupMode log when the template leaves it empty and the
// storage prefix extended by "<cluster>-pd.<ns>-2379-log-<now in UTC>", so
// a recreated schedule's log backup never writes into its predecessor's
// folder. Pure.
func newLogBackup(bs *v1alpha1.BackupSchedule, now time.Time) *v1alpha1.Backup {
	spec := inheritSchedule(&bs.Spec, bs.Spec.LogBackupTemplate)
	if spec.BackupMode == "" {
		spec.BackupMode = v1alpha1.BackupModeLog
	}
	if spec.BR != nil {
		appendPrefix(&spec.StorageProvider, brPrefix(bs, spec.BR, "log-", now))
	}
	return &v1alpha1.Backup{ObjectMeta: newChildMeta(bs, logBackupName(bs)), Spec: *spec}
}

// newChildMeta returns the metadata of a Backup bs creates: bs's own labels
// (so that an operator started with --selector also sees the Backup) under
// the schedule's three labels, and bs as controlling owner.
func newChildMeta(bs *v1alpha1.BackupSchedule, name string) metav1.ObjectMeta {
	labels := maps.Clone(bs.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[label.NameLabelKey] = NameLabelValue
	labels[label.ManagedByLabelKey] = ManagedByLabelValue
	labels[ScheduleLabelKey] = bs.Name
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       bs.Namespace,
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(bs, v1alpha1.SchemeGroupVersion.WithKind("BackupSchedule"))},
	}
}

// brPrefix returns the folder of one BR backup: "<cluster>-pd.<cluster
// namespace>-2379-<kind><at in UTC>", the cluster namespace defaulting to
// bs's.
func brPrefix(bs *v1alpha1.BackupSchedule, br *v1alpha1.BRConfig, kind string, at time.Time) string {
	ns := br.ClusterNamespace
	if ns == "" {
		ns = bs.Namespace
	}
	return br.Cluster + "-pd." + ns + "-" + pdClientPort + "-" + kind + at.UTC().Format(TimeFormat)
}

// appendPrefix appends folder to the prefix of the storage provider sp
// sets (S3, GCS, Azure Blob or local); a provider given by the deprecated
// full path gets folder appended to its path instead.
func appendPrefix(sp *v1alpha1.StorageProvider, folder string) {
	join := func(base string) string {
		if base = strings.TrimSuffix(base, "/"); base == "" {
			return folder
		}
		return base + "/" + folder
	}
	switch {
	case sp.S3 != nil && sp.S3.Prefix == "" && sp.S3.Path != "":
		sp.S3.Path = join(sp.S3.Path)
	case sp.S3 != nil:
		sp.S3.Prefix = join(sp.S3.Prefix)
	case sp.Gcs != nil && sp.Gcs.Prefix == "" && sp.Gcs.Path != "":
		sp.Gcs.Path = join(sp.Gcs.Path)
	case sp.Gcs != nil:
		sp.Gcs.Prefix = join(sp.Gcs.Prefix)
	case sp.Azblob != nil && sp.Azblob.Prefix == "" && sp.Azblob.Path != "":
		sp.Azblob.Path = join(sp.Azblob.Path)
	case sp.Azblob != nil:
		sp.Azblob.Prefix = join(sp.Azblob.Prefix)
	case sp.Local != nil:
		sp.Local.Prefix = join(sp.Local.Prefix)
	}
}

// inheritSchedule returns a copy of template completed by the schedule's
// own fields where the template leaves them empty: the storage provider
// (only when the template sets none), BR config, image pull secrets and the
// scratch PVC's storage class, size and volume attributes class.
func inheritSchedule(s *v1alpha1.BackupScheduleSpec, template *v1alpha1.BackupSpec) *v1alpha1.BackupSpec {
	t := template.DeepCopy()
	sp := &t.StorageProvider
	if sp.S3 == nil && sp.Gcs == nil && sp.Azblob == nil && sp.Local == nil {
		t.StorageProvider = *s.StorageProvider.DeepCopy()
	}
	if t.BR == nil {
		t.BR = s.BR.DeepCopy()
	}
	if len(t.ImagePullSecrets) == 0 && len(s.ImagePullSecrets) > 0 {
		t.ImagePullSecrets = append(t.ImagePullSecrets, s.ImagePullSecrets...)
	}
	if t.StorageClassName == nil && s.StorageClassName != nil {
		sc := *s.StorageClassName
		t.StorageClassName = &sc
	}
	if t.StorageSize == "" {
		t.StorageSize = s.StorageSize
	}
	if t.VolumeAttributesClassName == nil && s.VolumeAttributesClassName != nil {
		vac := *s.VolumeAttributesClassName
		t.VolumeAttributesClassName = &vac
	}
	return t
}

// compactTimeFormat renders a CompactBackup's startTs and endTs (UTC), as
// the TiDB Operator does.
const compactTimeFormat = "2006-01-02 15:04:05"

// compactName returns the name of the CompactBackup bs creates at now:
// "compact-<bs>-<now in UTC as TimeFormat>".
func compactName(bs *v1alpha1.BackupSchedule, now time.Time) string {
	return "compact-" + bs.Name + "-" + now.UTC().Format(TimeFormat)
}

// newCompactBackup builds the CompactBackup bs creates at now for the range
// w of its log backup lb: the template with startTs and endTs, br.cluster
// and br.clusterNamespace of the log backup when the template names no
// cluster, and the log backup's storage when the template sets none (else
// the template's, with the log backup's folder appended, so that it points
// at the log files); bs's image pull secrets when the template has none.
// Labels and owner: see newChildMeta. Pure.
func newCompactBackup(bs *v1alpha1.BackupSchedule, template *v1alpha1.CompactSpec, lb *v1alpha1.Backup,
	w compactRange, now time.Time) *v1alpha1.CompactBackup {
	spec := template.DeepCopy()
	spec.StartTs = w.Start.UTC().Format(compactTimeFormat)
	spec.EndTs = w.End.UTC().Format(compactTimeFormat)
	if spec.BR == nil && lb.Spec.BR != nil {
		ns := lb.Spec.BR.ClusterNamespace
		if ns == "" {
			ns = bs.Namespace
		}
		spec.BR = &v1alpha1.BRConfig{Cluster: lb.Spec.BR.Cluster, ClusterNamespace: ns}
	}
	if sp := &spec.StorageProvider; sp.S3 == nil && sp.Gcs == nil && sp.Azblob == nil && sp.Local == nil {
		spec.StorageProvider = *lb.Spec.StorageProvider.DeepCopy()
	} else if folder := storageFolder(&lb.Spec.StorageProvider); folder != "" {
		appendPrefix(&spec.StorageProvider, folder)
	}
	if len(spec.ImagePullSecrets) == 0 && len(bs.Spec.ImagePullSecrets) > 0 {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, bs.Spec.ImagePullSecrets...)
	}
	return &v1alpha1.CompactBackup{ObjectMeta: newChildMeta(bs, compactName(bs, now)), Spec: *spec}
}

// storageFolder returns the last element of the prefix (or deprecated
// path) of the provider sp sets: the folder appendPrefix gave a Backup.
func storageFolder(sp *v1alpha1.StorageProvider) string {
	var p string
	switch {
	case sp.S3 != nil:
		p = firstNonEmpty(sp.S3.Prefix, sp.S3.Path)
	case sp.Gcs != nil:
		p = firstNonEmpty(sp.Gcs.Prefix, sp.Gcs.Path)
	case sp.Azblob != nil:
		p = firstNonEmpty(sp.Azblob.Prefix, sp.Azblob.Path)
	case sp.Local != nil:
		p = sp.Local.Prefix
	}
	p = strings.TrimSuffix(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
