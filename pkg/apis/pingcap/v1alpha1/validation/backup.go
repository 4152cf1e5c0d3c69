package validation

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

var (
	backupTypes    = []string{"", "full", "raw", "db", "table", "tiflash-replica"}
	backupModes    = []string{"", "snapshot", "log", "volume-snapshot"}
	cleanPolicies  = []string{"", "Retain", "OnFailure", "Delete"}
	logSubcommands = []string{"", "log-start", "log-stop", "log-pause"}
	restoreModes   = []string{"", "snapshot", "pitr", "volume-snapshot"}
)

// ValidateBackup returns every problem of b's spec; an empty list means
// valid. A BR backup (spec.br set) needs br.cluster and exactly one storage
// provider; a dumpling backup needs spec.from and at most one provider; log
// and volume-snapshot backups need BR; db and table backups name their
// database (and table). A nil b is valid.
func ValidateBackup(b *v1alpha1.Backup) field.ErrorList {
	if b == nil {
		return nil
	}
	if b.DecodeError != nil {
		return validateDecoded(b.DecodeError)
	}
	return validateBackupSpec(&b.Spec, field.NewPath("spec"))
}

// ValidateRestore returns every problem of r's spec; an empty list means
// valid. A BR restore needs br.cluster and exactly one storage provider; a
// lightning restore (no BR) needs spec.to and may only be a snapshot
// restore. A nil r is valid.
func ValidateRestore(r *v1alpha1.Restore) field.ErrorList {
	if r == nil {
		return nil
	}
	if r.DecodeError != nil {
		return validateDecoded(r.DecodeError)
	}
	s, path := &r.Spec, field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, notSupported(string(s.Mode), restoreModes, path.Child("restoreMode"))...)
	errs = append(errs, notSupported(string(s.BackupType), backupTypes, path.Child("backupType"))...)
	errs = append(errs, validateStorageProvider(&s.StorageProvider, s.BR != nil, path)...)
	errs = append(errs, validateStorageProvider(&s.PitrFullBackupStorageProvider, false, path.Child("pitrFullBackupStorageProvider"))...)
	if s.BR != nil {
		errs = append(errs, validateBR(s.BR, path.Child("br"))...)
	} else {
		if s.Mode != "" && s.Mode != v1alpha1.RestoreModeSnapshot {
			errs = append(errs, field.Required(path.Child("br"), string(s.Mode)+" restores run BR"))
		}
		errs = append(errs, validateTiDBAccess(s.To, path.Child("to"), "a restore without BR loads data through TiDB")...)
	}
	errs = append(errs, validateRetryPolicy(&s.BackoffRetryPolicy, path.Child("backoffRetryPolicy"))...)
	return errs
}

// ValidateBackupSchedule returns every problem of bs's spec: the schedule
// must be a cron expression (see validateCron), maxReservedTime and
// compactInterval positive Go durations, maxBackups positive, and the backup
// templates valid Backups. A template without a storage provider or BR config
// inherits the schedule-level one before it is checked. A nil bs is valid.
func ValidateBackupSchedule(bs *v1alpha1.BackupSchedule) field.ErrorList {
	if bs == nil {
		return nil
	}
	if bs.DecodeError != nil {
		return validateDecoded(bs.DecodeError)
	}
	s, path := &bs.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(path.Child("schedule"), "a cron schedule such as \"0 2 * * *\" or \"@daily\" is required"))
	} else if err := validateCron(s.Schedule); err != nil {
		errs = append(errs, field.Invalid(path.Child("schedule"), s.Schedule, err.Error()))
	}
	if s.MaxReservedTime != nil {
		errs = append(errs, validatePositiveDuration(*s.MaxReservedTime, path.Child("maxReservedTime"))...)
	}
	if s.CompactInterval != nil {
		errs = append(errs, validatePositiveDuration(*s.CompactInterval, path.Child("compactInterval"))...)
	}
	if s.MaxBackups != nil && *s.MaxBackups <= 0 {
		errs = append(errs, field.Invalid(path.Child("maxBackups"), *s.MaxBackups, "must be greater than zero"))
	}
	errs = append(errs, validateStorageProvider(&s.StorageProvider, false, path)...)
	errs = append(errs, validateBackupSpec(inheritSchedule(s, &s.BackupTemplate), path.Child("backupTemplate"))...)
	if s.LogBackupTemplate != nil {
		errs = append(errs, validateBackupSpec(inheritSchedule(s, s.LogBackupTemplate), path.Child("logBackupTemplate"))...)
	}
	return append(errs, validateCompaction(s, path)...)
}

// validateCompaction checks the schedule's compaction fields: the
// compactBackupTemplate must decode into a CompactSpec whose concurrency
// is positive, maxRetryTimes not negative and br and storage provider (when
// set; otherwise the log backup's are used) valid; minCompactStartTs must
// be a TSO or a datetime. The TiDB Operator checks none of these and fails
// (or silently compacts nothing) later.
func validateCompaction(s *v1alpha1.BackupScheduleSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinCompactStartTs != "" {
		if _, err := v1alpha1.ParseTSO(s.MinCompactStartTs); err != nil {
			errs = append(errs, field.Invalid(path.Child("minCompactStartTs"), s.MinCompactStartTs, err.Error()))
		}
	}
	t, err := s.CompactTemplate()
	tp := path.Child("compactBackupTemplate")
	if err != nil {
		return append(errs, field.Invalid(tp, string(s.CompactBackupTemplate.Raw), err.Error()))
	}
	if t == nil {
		return errs
	}
	if t.Concurrency <= 0 {
		errs = append(errs, field.Invalid(tp.Child("concurrency"), t.Concurrency, "concurrency must be greater than 0"))
	}
	if t.MaxRetryTimes < 0 {
		errs = append(errs, field.Invalid(tp.Child("maxRetryTimes"), t.MaxRetryTimes, "maxRetryTimes must not be negative"))
	}
	if t.BR != nil {
		errs = append(errs, validateBR(t.BR, tp.Child("br"))...)
	}
	return append(errs, validateStorageProvider(&t.StorageProvider, false, tp)...)
}

// inheritSchedule returns a copy of template with the schedule-level storage
// provider and BR config filled in where the template has none.
func inheritSchedule(s *v1alpha1.BackupScheduleSpec, template *v1alpha1.BackupSpec) *v1alpha1.BackupSpec {
	t := template.DeepCopy()
	if len(providerNames(&t.StorageProvider)) == 0 {
		t.StorageProvider = *s.StorageProvider.DeepCopy()
	}
	if t.BR == nil {
		t.BR = s.BR.DeepCopy()
	}
	return t
}

func validateBackupSpec(s *v1alpha1.BackupSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, notSupported(string(s.BackupType), backupTypes, path.Child("backupType"))...)
	errs = append(errs, notSupported(string(s.BackupMode), backupModes, path.Child("backupMode"))...)
	errs = append(errs, notSupported(string(s.CleanPolicy), cleanPolicies, path.Child("cleanPolicy"))...)
	errs = append(errs, notSupported(string(s.LogSubcommand), logSubcommands, path.Child("logSubcommand"))...)
	if s.LogSubcommand != "" && s.BackupMode != v1alpha1.BackupModeLog {
		errs = append(errs, field.Forbidden(path.Child("logSubcommand"), "only log backups (backupMode: log) take a log subcommand"))
	}
	errs = append(errs, validateStorageProvider(&s.StorageProvider, s.BR != nil, path)...)
	if s.BR != nil {
		errs = append(errs, validateBR(s.BR, path.Child("br"))...)
		errs = append(errs, validateBRBackupTarget(s, path.Child("br"))...)
	} else {
		if s.BackupMode == v1alpha1.BackupModeLog || s.BackupMode == v1alpha1.BackupModeVolumeSnapshot {
			errs = append(errs, field.Required(path.Child("br"), string(s.BackupMode)+" backups run BR"))
		}
		errs = append(errs, validateTiDBAccess(s.From, path.Child("from"), "a backup without BR dumps data through TiDB")...)
	}
	errs = append(errs, validateRetryPolicy(&s.BackoffRetryPolicy, path.Child("backoffRetryPolicy"))...)
	return errs
}

// validateBRBackupTarget requires br.db for db backups and br.db plus
// br.table for table backups, because BR is told what to back up by them.
func validateBRBackupTarget(s *v1alpha1.BackupSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (s.BackupType == v1alpha1.BackupTypeDB || s.BackupType == v1alpha1.BackupTypeTable) && s.BR.DB == "" {
		errs = append(errs, field.Required(path.Child("db"), string(s.BackupType)+" backups name the database"))
	}
	if s.BackupType == v1alpha1.BackupTypeTable && s.BR.Table == "" {
		errs = append(errs, field.Required(path.Child("table"), "table backups name the table"))
	}
	return errs
}

func validateBR(br *v1alpha1.BRConfig, path *field.Path) field.ErrorList {
	if br.Cluster == "" {
		return field.ErrorList{field.Required(path.Child("cluster"), "BR needs the name of the TidbCluster")}
	}
	return nil
}

func validateTiDBAccess(a *v1alpha1.TiDBAccessConfig, path *field.Path, why string) field.ErrorList {
	if a == nil {
		return field.ErrorList{field.Required(path, why)}
	}
	var errs field.ErrorList
	if a.Host == "" {
		errs = append(errs, field.Required(path.Child("host"), "the TiDB host is required"))
	}
	if a.SecretName == "" {
		errs = append(errs, field.Required(path.Child("secretName"), "a Secret with the TiDB password is required"))
	}
	return errs
}

// providerNames lists the storage providers set in p, in a fixed order.
func providerNames(p *v1alpha1.StorageProvider) []string {
	var names []string
	for _, n := range []struct {
		name string
		set  bool
	}{{"s3", p.S3 != nil}, {"gcs", p.Gcs != nil}, {"azblob", p.Azblob != nil}, {"local", p.Local != nil}} {
		if n.set {
			names = append(names, n.name)
		}
	}
	return names
}

// validateStorageProvider allows at most one provider, requires exactly one
// when required, and checks the S3 and GCS fields each provider needs.
func validateStorageProvider(p *v1alpha1.StorageProvider, required bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := providerNames(p)
	switch {
	case len(names) == 0 && required:
		errs = append(errs, field.Required(path, "set exactly one storage provider: s3, gcs, azblob or local"))
	case len(names) > 1:
		for _, extra := range names[1:] {
			errs = append(errs, field.Forbidden(path.Child(extra),
				"set exactly one storage provider, found "+strings.Join(names, ", ")))
		}
	}
	if s3 := p.S3; s3 != nil {
		if s3.Provider == "" {
			errs = append(errs, field.Required(path.Child("s3", "provider"), "the S3 flavour, such as aws, ceph or minio, is required"))
		}
		if s3.Bucket == "" && s3.Path == "" {
			errs = append(errs, field.Required(path.Child("s3", "bucket"), "set bucket (or the deprecated path)"))
		}
	}
	if p.Gcs != nil && p.Gcs.ProjectId == "" {
		errs = append(errs, field.Required(path.Child("gcs", "projectId"), "the Google Cloud project is required"))
	}
	return errs
}

func validateRetryPolicy(p *v1alpha1.BackoffRetryPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.MinRetryDuration != "" {
		errs = append(errs, validateDuration(p.MinRetryDuration, path.Child("minRetryDuration"))...)
	}
	if p.RetryTimeout != "" {
		errs = append(errs, validateDuration(p.RetryTimeout, path.Child("retryTimeout"))...)
	}
	if p.MaxRetryTimes < 0 {
		errs = append(errs, field.Invalid(path.Child("maxRetryTimes"), p.MaxRetryTimes, "must not be negative"))
	}
	return errs
}

// validatePositiveDuration requires a Go duration greater than zero, because
// a zero retention or interval would delete or compact continuously.
func validatePositiveDuration(s string, path *field.Path) field.ErrorList {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, s, "must be a Go duration such as 72h")}
	case d <= 0:
		return field.ErrorList{field.Invalid(path, s, "must be greater than zero")}
	}
	return nil
}

func notSupported(value string, allowed []string, path *field.Path) field.ErrorList {
	if slices.Contains(allowed, value) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, value, allowed[1:])}
}
