package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BackupSchedule creates Backups on a cron schedule and garbage-collects old ones.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=bks,categories=pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="MaxBackups",type=integer,JSONPath=`.spec.maxBackups`
// +kubebuilder:printcolumn:name="MaxReservedTime",type=string,JSONPath=`.spec.maxReservedTime`
// +kubebuilder:printcolumn:name="LastBackup",type=string,JSONPath=`.status.lastBackup`,priority=1
// +kubebuilder:printcolumn:name="LastBackupTime",type=date,JSONPath=`.status.lastBackupTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired schedule.
	Spec BackupScheduleSpec `json:"spec"`
	// Status is the observed state of the schedule.
	// +optional
	Status BackupScheduleStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// BackupScheduleList is a list of BackupSchedules.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type BackupScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the BackupSchedules.
	Items []BackupSchedule `json:"items"`
}

// BackupScheduleSpec is the desired schedule. A template without a storage
// provider or br inherits the schedule's.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.backupTemplate.br) || has(self.br)) || has(self.backupTemplate.s3) || has(self.backupTemplate.gcs) || has(self.backupTemplate.azblob) || has(self.backupTemplate.local) || has(self.s3) || has(self.gcs) || has(self.azblob) || has(self.local)",message="BR backups need a storage provider: set one of s3, gcs, azblob or local in backupTemplate or in spec",fieldPath=".backupTemplate",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.logBackupTemplate) || !(has(self.logBackupTemplate.br) || has(self.br)) || has(self.logBackupTemplate.s3) || has(self.logBackupTemplate.gcs) || has(self.logBackupTemplate.azblob) || has(self.logBackupTemplate.local) || has(self.s3) || has(self.gcs) || has(self.azblob) || has(self.local)",message="BR backups need a storage provider: set one of s3, gcs, azblob or local in logBackupTemplate or in spec",fieldPath=".logBackupTemplate",reason=FieldValueRequired
type BackupScheduleSpec struct {
	StorageProvider `json:",inline"`

	// Schedule is a standard cron expression, such as "0 2 * * *": five fields
	// (minute hour day-of-month month day-of-week), or a descriptor such as
	// @daily or "@every 6h", optionally after CRON_TZ=<zone> or TZ=<zone>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self.matches('^\\s*((CRON_TZ|TZ)=\\S+\\s+)?(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every\\s+(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+|([*?]|0*([1-5]?[0-9])(-0*([1-5]?[0-9]))?)(/0*[1-9][0-9]*)?(,([*?]|0*([1-5]?[0-9])(-0*([1-5]?[0-9]))?)(/0*[1-9][0-9]*)?)*\\s+([*?]|0*(1?[0-9]|2[0-3])(-0*(1?[0-9]|2[0-3]))?)(/0*[1-9][0-9]*)?(,([*?]|0*(1?[0-9]|2[0-3])(-0*(1?[0-9]|2[0-3]))?)(/0*[1-9][0-9]*)?)*\\s+([*?]|0*([1-9]|[12][0-9]|3[01])(-0*([1-9]|[12][0-9]|3[01]))?)(/0*[1-9][0-9]*)?(,([*?]|0*([1-9]|[12][0-9]|3[01])(-0*([1-9]|[12][0-9]|3[01]))?)(/0*[1-9][0-9]*)?)*\\s+([*?]|(0*([1-9]|1[0-2])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0*([1-9]|1[0-2])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/0*[1-9][0-9]*)?(,([*?]|(0*([1-9]|1[0-2])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0*([1-9]|1[0-2])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/0*[1-9][0-9]*)?)*\\s+([*?]|(0*([0-6])|(?i:sun|mon|tue|wed|thu|fri|sat))(-(0*([0-6])|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/0*[1-9][0-9]*)?(,([*?]|(0*([0-6])|(?i:sun|mon|tue|wed|thu|fri|sat))(-(0*([0-6])|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/0*[1-9][0-9]*)?)*)\\s*$')`,message="must be a cron schedule: five fields (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or jan-dec, day of week 0-6 or sun-sat; each *, ?, a value, a range a-b, a list a,b, optionally /step), or @yearly, @monthly, @weekly, @daily, @hourly or @every <duration>, optionally after CRON_TZ=<zone>"
	Schedule string `json:"schedule"`
	// Pause stops creating Backups; garbage collection still runs.
	// +optional
	Pause bool `json:"pause,omitempty"`
	// MaxBackups keeps the newest N Backups.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxBackups *int32 `json:"maxBackups,omitempty"`
	// MaxReservedTime deletes Backups older than this Go duration, such as 72h (preferred over maxBackups).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))*)$') && duration(self) > duration('0s')`,message="must be a positive Go duration such as 72h"
	MaxReservedTime *string `json:"maxReservedTime,omitempty"`
	// BackupTemplate is the spec of each created Backup.
	BackupTemplate BackupSpec `json:"backupTemplate"`
	// LogBackupTemplate is the spec of the schedule's log backup.
	// +optional
	LogBackupTemplate *BackupSpec `json:"logBackupTemplate,omitempty"`
	// CompactBackupTemplate is the spec of the schedule's log compactions (kept as given).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	CompactBackupTemplate *runtime.RawExtension `json:"compactBackupTemplate,omitempty"`
	// CompactInterval is how often log compactions run, a Go duration such as 1h.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))*)$') && duration(self) > duration('0s')`,message="must be a positive Go duration such as 1h"
	CompactInterval *string `json:"compactInterval,omitempty"`
	// BR configures BR for every created Backup.
	// +optional
	BR *BRConfig `json:"br,omitempty"`
	// StorageClassName of scratch PVCs (non-BR backups).
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// StorageSize of scratch PVCs (non-BR backups).
	// +optional
	StorageSize string `json:"storageSize,omitempty"`
	// VolumeAttributesClassName of scratch PVCs (non-BR backups).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`
	// MinCompactStartTs is the earliest TSO log compactions start from.
	// +optional
	MinCompactStartTs string `json:"minCompactStartTs,omitempty"`
	// ImagePullSecrets of the backup jobs.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// BackupScheduleStatus is the observed state of a schedule.
type BackupScheduleStatus struct {
	// LastBackup is the name of the last Backup created.
	// +optional
	LastBackup string `json:"lastBackup,omitempty"`
	// LastBackupTime is the scheduled time of the last Backup.
	// +optional
	LastBackupTime *metav1.Time `json:"lastBackupTime,omitempty"`
	// AllBackupCleanTime is when garbage collection last deleted every Backup.
	// +optional
	AllBackupCleanTime *metav1.Time `json:"allBackupCleanTime,omitempty"`
	// LogBackup is the name of the schedule's log backup.
	// +optional
	LogBackup *string `json:"logBackup,omitempty"`
	// LogBackupStartTs is when the schedule created its log backup: log
	// compactions start there.
	// +optional
	LogBackupStartTs *metav1.Time `json:"logBackupStartTs,omitempty"`
	// LastCompact is the name of the last CompactBackup created.
	// +optional
	LastCompact string `json:"lastCompact,omitempty"`
	// LastCompactProgress is how far the log backup is compacted: the end of
	// the last Complete CompactBackup (or the start of a Failed one, redone).
	// +optional
	LastCompactProgress *metav1.Time `json:"lastCompactProgress,omitempty"`
	// LastCompactExecutionTs is when the last CompactBackup was created.
	// +optional
	LastCompactExecutionTs *metav1.Time `json:"lastCompactExecutionTs,omitempty"`
}
