package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Restore is one restore of backup data into a TiDB cluster, run as a Job.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rt,categories=pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.timeStarted`,priority=1
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.timeCompleted`,priority=1
// +kubebuilder:printcolumn:name="TimeTaken",type=string,JSONPath=`.status.timeTaken`
// +kubebuilder:printcolumn:name="CommitTS",type=string,JSONPath=`.status.commitTs`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Restore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired restore.
	// +kubebuilder:validation:XValidation:rule="!has(self.br) || has(self.s3) || has(self.gcs) || has(self.azblob) || has(self.local)",message="BR restores need a storage provider: set one of s3, gcs, azblob or local",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="has(self.br) || !has(self.restoreMode) || self.restoreMode.size() == 0 || self.restoreMode == 'snapshot'",message="pitr and volume-snapshot restores run BR: set br",fieldPath=".br",reason=FieldValueRequired
	// +kubebuilder:validation:XValidation:rule="has(self.br) || has(self.to)",message="a restore without br loads data through TiDB: set to (or br)",fieldPath=".to",reason=FieldValueRequired
	Spec RestoreSpec `json:"spec"`
	// Status is the observed progress of the restore.
	// +optional
	Status RestoreStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// RestoreList is a list of Restores.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type RestoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Restores.
	Items []Restore `json:"items"`
}

// RestoreMode is how data is restored.
// +kubebuilder:validation:Enum="";snapshot;pitr;volume-snapshot
type RestoreMode string

// Restore modes.
const (
	RestoreModeSnapshot       RestoreMode = "snapshot"
	RestoreModePiTR           RestoreMode = "pitr"
	RestoreModeVolumeSnapshot RestoreMode = "volume-snapshot"
)

// PruneType says when a volume-snapshot restore removes what it restored:
// afterFailed (prune once the restore fails) or alreadyFailed (prune a
// restore that failed before).
type PruneType string

// Prune types.
const (
	PruneTypeAfterFailed   PruneType = "afterFailed"
	PruneTypeAlreadyFailed PruneType = "alreadyFailed"
)

// RestoreSpec is the desired restore.
type RestoreSpec struct {
	corev1.ResourceRequirements `json:"resources,omitempty"`
	StorageProvider             `json:",inline"`

	// Env of the restore container.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Env []corev1.EnvVar `json:"env,omitempty"`
	// To is how to log in to TiDB (non-BR restores).
	// +optional
	To *TiDBAccessConfig `json:"to,omitempty"`
	// BackupType is full (default), raw, db or table.
	// +optional
	BackupType BackupType `json:"backupType,omitempty"`
	// Mode is snapshot (default), pitr or volume-snapshot.
	// +optional
	Mode RestoreMode `json:"restoreMode,omitempty"`
	// PitrRestoredTs is the point in time to restore to.
	// +optional
	PitrRestoredTs string `json:"pitrRestoredTs,omitempty"`
	// LogRestoreStartTs is where a PiTR restore starts replaying logs.
	// +optional
	LogRestoreStartTs string `json:"logRestoreStartTs,omitempty"`
	// FederalVolumeRestorePhase is the phase of a federated volume-snapshot restore.
	// +optional
	FederalVolumeRestorePhase string `json:"federalVolumeRestorePhase,omitempty"`
	// VolumeAZ is the availability zone of restored volumes.
	// +optional
	VolumeAZ string `json:"volumeAZ,omitempty"`
	// PitrFullBackupStorageProvider is where the full backup of a PiTR restore lives.
	// +optional
	PitrFullBackupStorageProvider StorageProvider `json:"pitrFullBackupStorageProvider,omitempty"`
	// TikvGCLifeTime is the GC life time set while the restore runs.
	// +optional
	TikvGCLifeTime *string `json:"tikvGCLifeTime,omitempty"`
	// StorageClassName of the scratch PVC (non-BR restores).
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// StorageSize of the scratch PVC (non-BR restores).
	// +optional
	StorageSize string `json:"storageSize,omitempty"`
	// AutomountServiceAccountToken of the job's pod; the Kubernetes default (true) when unset.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// VolumeAttributesClassName of the scratch PVC (non-BR jobs).
	// +optional
	VolumeAttributesClassName *string `json:"volumeAttributesClassName,omitempty"`
	// BackoffLimit is the number of retries of the restore Job before it fails
	// (the Job's spec.backoffLimit).
	// +optional
	// +kubebuilder:validation:Minimum=0
	BackoffLimit int32 `json:"backoffLimit,omitempty"`
	// Prune removes what a failed volume-snapshot restore left behind:
	// afterFailed or alreadyFailed.
	// +optional
	Prune PruneType `json:"prune,omitempty"`
	// BR configures BR.
	// +optional
	BR *BRConfig `json:"br,omitempty"`
	// Tolerations of the job's pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity of the job's pod (core/v1 Affinity, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// UseKMS decrypts credentials with AWS KMS.
	// +optional
	UseKMS bool `json:"useKMS,omitempty"`
	// ServiceAccount of the job's pod; tidb-backup-manager by default.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// ToolImage overrides the BR or lightning image.
	// +optional
	ToolImage string `json:"toolImage,omitempty"`
	// TableFilter are table filter rules.
	// +optional
	TableFilter []string `json:"tableFilter,omitempty"`
	// ImagePullSecrets of the job's pod.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// PriorityClassName of the job's pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// PodSecurityContext of the job's pod.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// Warmup warms restored volumes up: sync or async.
	// +optional
	// +kubebuilder:validation:Enum="";sync;async
	Warmup string `json:"warmup,omitempty"`
	// WarmupImage is the image of the warm-up jobs.
	// +optional
	WarmupImage string `json:"warmupImage,omitempty"`
	// WarmupStrategy is fio, hybrid (default), fsr or check-wal-only.
	// +optional
	// +kubebuilder:validation:Enum="";fio;hybrid;fsr;check-wal-only
	WarmupStrategy string `json:"warmupStrategy,omitempty"`
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
	// TolerateSingleTiKVOutage lets a volume-snapshot restore proceed with one TiKV down.
	// +optional
	TolerateSingleTiKVOutage bool `json:"tolerateSingleTiKVOutage,omitempty"`
	// BackoffRetryPolicy bounds retries of a failed restore.
	// +optional
	BackoffRetryPolicy BackoffRetryPolicy `json:"backoffRetryPolicy,omitempty"`
}

// RestoreConditionType is a Restore condition or phase.
type RestoreConditionType string

// Restore phases and condition types.
const (
	RestoreScheduled   RestoreConditionType = "Scheduled"
	RestoreRunning     RestoreConditionType = "Running"
	RestoreComplete    RestoreConditionType = "Complete"
	RestoreFailed      RestoreConditionType = "Failed"
	RestoreRetryFailed RestoreConditionType = "RetryFailed"
	RestoreInvalid     RestoreConditionType = "Invalid"
)

// RestoreCondition is one observed condition of a Restore.
type RestoreCondition struct {
	// Type of the condition.
	Type RestoreConditionType `json:"type"`
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

// RestoreStatus is the observed progress of a Restore.
type RestoreStatus struct {
	// TimeStarted is when the restore started.
	// +optional
	TimeStarted metav1.Time `json:"timeStarted,omitempty"`
	// TimeCompleted is when the restore finished.
	// +optional
	TimeCompleted metav1.Time `json:"timeCompleted,omitempty"`
	// TimeTaken is how long the restore took.
	// +optional
	TimeTaken string `json:"timeTaken,omitempty"`
	// CommitTs is the TSO the restored data is consistent at.
	// +optional
	CommitTs string `json:"commitTs,omitempty"`
	// Phase is the last condition type reached.
	// +optional
	Phase RestoreConditionType `json:"phase,omitempty"`
	// Conditions are the Restore's conditions.
	// +optional
	Conditions []RestoreCondition `json:"conditions,omitempty"`
	// Progresses are the progress of each step.
	// +optional
	Progresses []Progress `json:"progresses,omitempty"`
}
