package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CompactBackup compacts the files of a log backup between two TSOs into
// compacted SSTs (TiKV's compact-log-backup), run as a Job.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=cpbk,categories=pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="EndTs",type=string,JSONPath=`.status.endTs`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`
type CompactBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired compaction.
	Spec CompactSpec `json:"spec"`
	// Status is the observed progress of the compaction.
	// +optional
	Status CompactStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// CompactBackupList is a list of CompactBackups.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type CompactBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CompactBackups.
	Items []CompactBackup `json:"items"`
}

// CompactSpec is the desired compaction: the log backup storage, the TSO
// range and the Job's pod.
type CompactSpec struct {
	// Resources of the Job's containers (a named field here; Backup inlines it).
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Env of the backup-manager container; overrides the generated storage env.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	Env []corev1.EnvVar `json:"env,omitempty"`
	// StorageProvider is the log backup's storage.
	StorageProvider `json:",inline"`
	// StartTs is where the compaction starts: a TSO, "2006-01-02 15:04:05" or RFC 3339.
	// +optional
	StartTs string `json:"startTs,omitempty"`
	// EndTs is where the compaction ends, in the same forms as StartTs.
	// +optional
	EndTs string `json:"endTs,omitempty"`
	// Concurrency of the compaction; 4 by default.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	Concurrency int `json:"concurrency"`
	// MaxRetryTimes bounds the retries of a failed compaction (the Job's
	// backoffLimit); 6 by default.
	// +optional
	// +kubebuilder:default=6
	// +kubebuilder:validation:Minimum=0
	MaxRetryTimes int32 `json:"maxRetryTimes"`
	// ToolImage is the BR image; a tag-less image gets TiKV's version.
	// +optional
	ToolImage string `json:"toolImage,omitempty"`
	// TiKVImage provides /tikv-ctl; a tag-less image gets TiKV's version.
	// +optional
	TiKVImage string `json:"tikvImage,omitempty"`
	// BR names the TidbCluster (br.cluster, br.clusterNamespace) whose TiKV
	// version picks the tool images; its other fields are not used.
	// +optional
	BR *BRConfig `json:"br,omitempty"`
	// Tolerations of the Job's pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// ImagePullSecrets of the Job's pod.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// Affinity of the Job's pod (core/v1 Affinity, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// UseKMS decrypts credentials with AWS KMS.
	// +optional
	UseKMS bool `json:"useKMS,omitempty"`
	// ServiceAccount of the Job's pod; tidb-backup-manager by default.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// AutomountServiceAccountToken of the Job's pod; with false the token is
	// projected into the backup-manager container only.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// PodSecurityContext of the Job's pod.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	// PriorityClassName of the Job's pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// AdditionalVolumes of the Job's pod.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumes []corev1.Volume `json:"additionalVolumes,omitempty"`
	// AdditionalVolumeMounts of the Job's containers.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=array
	AdditionalVolumeMounts []corev1.VolumeMount `json:"additionalVolumeMounts,omitempty"`
}

// CompactState is the state of a compaction.
type CompactState string

// Compaction states, in the order a compaction goes through them.
const (
	CompactScheduled   CompactState = "Scheduled"
	CompactPrepare     CompactState = "Prepare"
	CompactRunning     CompactState = "Running"
	CompactComplete    CompactState = "Complete"
	CompactFailed      CompactState = "Failed"
	CompactRetryFailed CompactState = "RetryFailed"
)

// CompactRetryRecord is one failed run of a compaction.
type CompactRetryRecord struct {
	// RetryNum is the run's number (0: the first).
	// +optional
	RetryNum int `json:"retryNum,omitempty"`
	// DetectFailedAt is when the failure was seen.
	// +optional
	DetectFailedAt metav1.Time `json:"detectFailedAt,omitempty"`
	// RetryReason is the failure.
	// +optional
	RetryReason string `json:"retryReason,omitempty"`
}

// CompactStatus is the observed progress of a compaction.
type CompactStatus struct {
	// State is Scheduled, Prepare, Running, Complete, Failed or RetryFailed.
	// +optional
	State CompactState `json:"state,omitempty"`
	// Progress is [READ_META(done/total),COMPACT_WORK(done/total)].
	// +optional
	Progress string `json:"progress,omitempty"`
	// Message explains the state.
	// +optional
	Message string `json:"message,omitempty"`
	// EndTs is the TSO the compaction reached.
	// +optional
	EndTs string `json:"endTs,omitempty"`
	// BackoffRetryStatus records the failed runs.
	// +optional
	BackoffRetryStatus []CompactRetryRecord `json:"backoffRetryStatus,omitempty"`
	// Conditions are this operator's additions: Invalid (the spec cannot
	// run) and Unsupported (fields accepted and not acted on).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// UnmarshalJSON reads a CompactBackup like TidbCluster.UnmarshalJSON.
func (cb *CompactBackup) UnmarshalJSON(data []byte) error {
	type plain CompactBackup
	*cb = CompactBackup{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(cb), &cb.TypeMeta, &cb.ObjectMeta, &cb.Spec, &cb.Status)
	cb.DecodeError, cb.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a CompactBackup like TidbCluster.MarshalJSON.
func (cb CompactBackup) MarshalJSON() ([]byte, error) {
	type plain CompactBackup
	return encodeKeepingSpec(plain(cb), cb.DecodeError)
}

// GetUnknownFields returns cb.UnknownFields (see TidbCluster.GetUnknownFields).
func (cb *CompactBackup) GetUnknownFields() []string { return cb.UnknownFields }
