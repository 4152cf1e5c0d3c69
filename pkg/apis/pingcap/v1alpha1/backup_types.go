package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Backup is one backup of a TiDB cluster, run as a Job.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=bk,categories=pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.backupType`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.backupMode`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="BackupPath",type=string,JSONPath=`.status.backupPath`
// +kubebuilder:printcolumn:name="BackupSize",type=string,JSONPath=`.status.backupSizeReadable`
// +kubebuilder:printcolumn:name="IncrementalBackupSize",type=string,JSONPath=`.status.incrementalBackupSizeReadable`,priority=10
// +kubebuilder:printcolumn:name="CommitTS",type=string,JSONPath=`.status.commitTs`
// +kubebuilder:printcolumn:name="LogTruncateUntil",type=string,JSONPath=`.status.logSuccessTruncateUntil`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.timeStarted`,priority=1
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.timeCompleted`,priority=1
// +kubebuilder:printcolumn:name="TimeTaken",type=string,JSONPath=`.status.timeTaken`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Backup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired backup. (Rules that depend on br are here, not on
	// BackupSpec, because a BackupSchedule's templates inherit its br.)
	// +kubebuilder:validation:XValidation:rule="!has(self.br) || has(self.s3) || has(self.gcs) || has(self.azblob) || has(self.local)",message="BR backups need a storage provider: set one of s3, gcs, azblob or local",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="has(self.br) || !has(self.backupMode) || !(self.backupMode in ['log', 'volume-snapshot'])",message="log and volume-snapshot backups run BR: set br",fieldPath=".br",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="has(self.br) || has(self.from)",message="a backup without br dumps data through TiDB: set from (or br)",fieldPath=".from",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="!has(self.br) || !has(self.backupType) || !(self.backupType in ['db', 'table']) || (has(self.br.db) && self.br.db.size() > 0)",message="db and table backups name the database: set br.db",fieldPath=".br",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="!has(self.br) || !has(self.backupType) || self.backupType != 'table' || (has(self.br.table) && self.br.table.size() > 0)",message="table backups name the table: set br.table",fieldPath=".br",reason=FieldValueRequired
	Spec BackupSpec `json:"spec"`
	// Status is the observed progress of the backup.
	// +optional
	Status BackupStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// BackupList is a list of Backups.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type BackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Backups.
	Items []Backup `json:"items"`
}

// BackupType is what a backup covers.
// +kubebuilder:validation:Enum="";full;raw;db;table;tiflash-replica
type BackupType string

// BackupMode is how a backup is taken.
// +kubebuilder:validation:Enum="";snapshot;log;volume-snapshot
type BackupMode string

// CleanPolicyType says what happens to backup data when the Backup is deleted.
// +kubebuilder:validation:Enum="";Retain;OnFailure;Delete
type CleanPolicyType string

// Backup types, modes and clean policies.
const (
	BackupTypeFull  BackupType = "full"
	BackupTypeRaw   BackupType = "raw"
	BackupTypeDB    BackupType = "db"
	BackupTypeTable BackupType = "table"

	BackupModeSnapshot       BackupMode = "snapshot"
	BackupModeLog            BackupMode = "log"
	BackupModeVolumeSnapshot BackupMode = "volume-snapshot"

	CleanPolicyTypeRetain    CleanPolicyType = "Retain"
	CleanPolicyTypeOnFailure CleanPolicyType = "OnFailure"
	CleanPolicyTypeDelete    CleanPolicyType = "Delete"
)

// BackupSpec is the desired backup.
// +kubebuilder:validation:XValidation:rule="!has(self.logSubcommand) || (has(self.backupMode) && self.backupMode == 'log')",message="only log backups (backupMode: log) take a log subcommand",fieldPath=".logSubcommand"
type BackupSpec struct {
	corev1.ResourceRequirements `json:"resources,omitempty"`
	StorageProvider             `json:",inline"`

	// Env of the backup container.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Env []corev1.EnvVar `json:"env,omitempty"`
	// From is how to log in to TiDB (non-BR backups).
	// +optional
	From *TiDBAccessConfig `json:"from,omitempty"`
	// BackupType is full (default), raw, db, table or tiflash-replica.
	// +optional
	BackupType BackupType `json:"backupType,omitempty"`
	// BackupMode is snapshot (default), log or volume-snapshot.
	// +optional
	BackupMode BackupMode `json:"backupMode,omitempty"`
	// TikvGCLifeTime is the GC life time set while the backup runs.
	// +optional
	TikvGCLifeTime *string `json:"tikvGCLifeTime,omitempty"`
	// StorageClassName of the scratch PVC (non-BR backups).
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// StorageSize of the scratch PVC (non-BR backups).
	// +optional
	StorageSize string `json:"storageSize,omitempty"`
	// AutomountServiceAccountToken of the job's pod; the Kubernetes default (true) when unset.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// VolumeAttributesClassName of the scratch PVC (non-BR jobs).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`
	// BR configures BR; without it the backup uses dumpling.
	// +optional
	BR *BRConfig `json:"br,omitempty"`
	// CommitTs is the log backup's start TSO.
	// +optional
	CommitTs string `json:"commitTs,omitempty"`
	// LogSubcommand drives a log backup: log-start, log-stop or log-pause.
	// +optional
	// +kubebuilder:validation:Enum=log-start;log-stop;log-pause
	LogSubcommand LogSubCommandType `json:"logSubcommand,omitempty"`
	// CalcSizeLevel is how precisely a volume-snapshot backup's size is computed; all by default.
	// +optional
	CalcSizeLevel string `json:"calcSizeLevel,omitempty"`
	// FederalVolumeBackupPhase is the phase of a federated volume-snapshot backup.
	// +optional
	FederalVolumeBackupPhase string `json:"federalVolumeBackupPhase,omitempty"`
	// ResumeGcSchedule resumes GC and scheduling after a volume-snapshot backup.
	// +optional
	ResumeGcSchedule bool `json:"resumeGcSchedule,omitempty"`
	// Dumpling configures dumpling (non-BR backups).
	// +optional
	Dumpling *DumplingConfig `json:"dumpling,omitempty"`
	// LogTruncateUntil truncates log backup data before this TSO.
	// +optional
	LogTruncateUntil string `json:"logTruncateUntil,omitempty"`
	// LogStop stops the log backup.
	// +optional
	LogStop bool `json:"logStop,omitempty"`
	// ToolImage overrides the BR or dumpling image.
	// +optional
	ToolImage string `json:"toolImage,omitempty"`
	// TableFilter are table filter rules.
	// +optional
	TableFilter []string `json:"tableFilter,omitempty"`
	// ImagePullSecrets of the job's pod.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// CleanPolicy is Retain (default), OnFailure or Delete.
	// +optional
	CleanPolicy CleanPolicyType `json:"cleanPolicy,omitempty"`
	// CleanOption tunes the deletion of remote data.
	// +optional
	CleanOption *CleanOption `json:"cleanOption,omitempty"`
	// PriorityClassName of the job's pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// ServiceAccount of the job's pod; tidb-backup-manager by default.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// UseKMS decrypts credentials with AWS KMS.
	// +optional
	UseKMS bool `json:"useKMS,omitempty"`
	// Tolerations of the job's pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity of the job's pod (core/v1 Affinity, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// PodSecurityContext of the job's pod.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// BackoffRetryPolicy bounds retries of a failed snapshot backup.
	// +optional
	BackoffRetryPolicy BackoffRetryPolicy `json:"backoffRetryPolicy,omitempty"`
	// AdditionalVolumes of the job's pod.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumes []corev1.Volume `json:"additionalVolumes,omitempty"`
	// AdditionalVolumeMounts of the job's container.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumeMounts []corev1.VolumeMount `json:"additionalVolumeMounts,omitempty"`
	// VolumeBackupInitJobMaxActiveSeconds bounds the init job of a volume-snapshot backup; 600 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	VolumeBackupInitJobMaxActiveSeconds int `json:"volumeBackupInitJobMaxActiveSeconds,omitempty"`
}

// LogSubCommandType is a log backup command.
type LogSubCommandType string

// DumplingConfig configures dumpling.
type DumplingConfig struct {
	// Options are extra dumpling arguments.
	// +optional
	Options []string `json:"options,omitempty"`
	// TableFilter are table filter rules. Deprecated: use spec.tableFilter.
	// +optional
	TableFilter []string `json:"tableFilter,omitempty"`
}

// CleanOption tunes the deletion of remote backup data.
type CleanOption struct {
	// PageSize of object listing.
	// +optional
	PageSize uint64 `json:"pageSize,omitempty"`
	// RetryCount of failed deletions; 5 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RetryCount int `json:"retryCount,omitempty"`
	// BackoffEnabled backs off between retries.
	// +optional
	BackoffEnabled bool `json:"backoffEnabled,omitempty"`
	// DisableBatchConcurrency deletes objects one by one.
	// +optional
	DisableBatchConcurrency bool `json:"disableBatchConcurrency,omitempty"`
	// BatchConcurrency of batch deletions.
	// +optional
	BatchConcurrency uint32 `json:"batchConcurrency,omitempty"`
	// RoutineConcurrency of single deletions.
	// +optional
	RoutineConcurrency uint32 `json:"routineConcurrency,omitempty"`
	// SnapshotsDeleteRatio paces snapshot deletion; 1 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SnapshotsDeleteRatio float64 `json:"snapshotsDeleteRatio,omitempty"`
}

// Progress is the progress of one step of a job.
type Progress struct {
	// Step is the step's name.
	// +optional
	Step string `json:"step,omitempty"`
	// Progress in percent.
	// +optional
	Progress float64 `json:"progress,omitempty"`
	// LastTransitionTime is when the progress last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// BackoffRetryRecord is one retry of a failed backup.
type BackoffRetryRecord struct {
	// RetryNum counts the retries.
	// +optional
	RetryNum int `json:"retryNum,omitempty"`
	// DetectFailedAt is when the failure was detected.
	// +optional
	DetectFailedAt *metav1.Time `json:"detectFailedAt,omitempty"`
	// ExpectedRetryAt is when the retry is due.
	// +optional
	ExpectedRetryAt *metav1.Time `json:"expectedRetryAt,omitempty"`
	// RealRetryAt is when the retry happened.
	// +optional
	RealRetryAt *metav1.Time `json:"realRetryAt,omitempty"`
	// RetryReason says why it was retried.
	// +optional
	RetryReason string `json:"retryReason,omitempty"`
	// OriginalReason is the failure's reason.
	// +optional
	OriginalReason string `json:"originalReason,omitempty"`
}

// BackupConditionType is a Backup condition or phase.
type BackupConditionType string

// Backup phases and condition types.
const (
	BackupScheduled   BackupConditionType = "Scheduled"
	BackupRunning     BackupConditionType = "Running"
	BackupComplete    BackupConditionType = "Complete"
	BackupClean       BackupConditionType = "Clean"
	BackupRepeatable  BackupConditionType = "Repeatable"
	BackupFailed      BackupConditionType = "Failed"
	BackupRetryFailed BackupConditionType = "RetryFailed"
	BackupCleanFailed BackupConditionType = "CleanFailed"
	BackupInvalid     BackupConditionType = "Invalid"
	BackupPrepare     BackupConditionType = "Prepare"
	BackupStopped     BackupConditionType = "Stopped"
)

// BackupCondition is one observed condition of a Backup.
type BackupCondition struct {
	// Command is the log backup command the condition belongs to.
	// +optional
	Command LogSubCommandType `json:"command,omitempty"`
	// Type of the condition.
	Type BackupConditionType `json:"type"`
	// Status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a machine-readable cause.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable explanation.
	// +optional
	Message string `json:"message,omitempty"`
}

// BackupStatus is the observed progress of a Backup.
type BackupStatus struct {
	// BackupPath is where the data was written.
	// +optional
	BackupPath string `json:"backupPath,omitempty"`
	// TimeStarted is when the backup started.
	// +optional
	TimeStarted metav1.Time `json:"timeStarted,omitempty"`
	// TimeCompleted is when the backup finished.
	// +optional
	TimeCompleted metav1.Time `json:"timeCompleted,omitempty"`
	// TimeTaken is how long the backup took.
	// +optional
	TimeTaken string `json:"timeTaken,omitempty"`
	// BackupSizeReadable is the size in human units.
	// +optional
	BackupSizeReadable string `json:"backupSizeReadable,omitempty"`
	// BackupSize is the size in bytes.
	// +optional
	BackupSize int64 `json:"backupSize,omitempty"`
	// IncrementalBackupSizeReadable is the real size of a volume-snapshot backup in human units.
	// +optional
	IncrementalBackupSizeReadable string `json:"incrementalBackupSizeReadable,omitempty"`
	// IncrementalBackupSize is the real size of a volume-snapshot backup in bytes.
	// +optional
	IncrementalBackupSize int64 `json:"incrementalBackupSize,omitempty"`
	// CommitTs is the TSO the snapshot is consistent at.
	// +optional
	CommitTs string `json:"commitTs,omitempty"`
	// LogSuccessTruncateUntil is the TSO the log backup was truncated to.
	// +optional
	LogSuccessTruncateUntil string `json:"logSuccessTruncateUntil,omitempty"`
	// LogCheckpointTs is the log backup's checkpoint TSO.
	// +optional
	LogCheckpointTs string `json:"logCheckpointTs,omitempty"`
	// TimeSynced is when logCheckpointTs was last read from BR while the log
	// backup ran.
	// +optional
	// +nullable
	TimeSynced *metav1.Time `json:"timeSynced,omitempty"`
	// Phase is the last condition type reached.
	// +optional
	Phase BackupConditionType `json:"phase,omitempty"`
	// Conditions are the Backup's conditions.
	// +optional
	Conditions []BackupCondition `json:"conditions,omitempty"`
	// Progresses are the progress of each step.
	// +optional
	Progresses []Progress `json:"progresses,omitempty"`
	// BackoffRetryStatus records the retries of a failed backup.
	// +optional
	BackoffRetryStatus []BackoffRetryRecord `json:"backoffRetryStatus,omitempty"`
	// LogSubCommandStatuses is the state of each log backup subcommand
	// (log-start, log-stop, log-truncate, log-pause, log-resume) by name.
	// +optional
	LogSubCommandStatuses map[LogSubCommandType]LogSubCommandStatus `json:"logSubCommandStatuses,omitempty"`
}

// LogSubCommandStatus is the state of one log backup subcommand: its own
// phase and conditions, kept apart from the whole Backup's.
type LogSubCommandStatus struct {
	// Command is the subcommand.
	// +optional
	Command LogSubCommandType `json:"command,omitempty"`
	// TimeStarted is when the subcommand's latest run began.
	// +optional
	// +nullable
	TimeStarted metav1.Time `json:"timeStarted,omitempty"`
	// TimeCompleted is when the subcommand's latest run finished.
	// +optional
	// +nullable
	TimeCompleted metav1.Time `json:"timeCompleted,omitempty"`
	// LogTruncatingUntil is the TSO a log-truncate truncates to.
	// +optional
	LogTruncatingUntil string `json:"logTruncatingUntil,omitempty"`
	// Phase is the subcommand's last condition type reached.
	// +optional
	Phase BackupConditionType `json:"phase,omitempty"`
	// Conditions are the subcommand's conditions.
	// +optional
	Conditions []BackupCondition `json:"conditions,omitempty"`
}
