package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TidbInitializer initializes a TidbCluster once, through the Job
// <cluster>-tidb-initializer: it sets the root password from passwordSecret,
// runs initSql or the SQL of initSqlConfigMap, and restricts root to
// permitHost. Unlike the TiDB Operator, status is a subresource.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ti,categories=all;pingcap
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster.name`,description="The TidbCluster initialized"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TidbInitializer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired initialization.
	Spec TidbInitializerSpec `json:"spec"`

	// Status mirrors the initializer Job, written only by the operator.
	// +optional
	Status TidbInitializerStatus `json:"status,omitempty"`

	// DecodeError is set, in memory only, when the stored spec could not be
	// read into these types; Spec is then zero (see DecodeError).
	DecodeError *DecodeError `json:"-"`

	// UnknownFields lists, in memory only, the JSON paths of the fields the
	// stored spec has inside pass-through Kubernetes types and those types do
	// not know (see UnknownFields); they are dropped when read.
	UnknownFields []string `json:"-"`
}

// TidbInitializerList is a list of TidbInitializers.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type TidbInitializerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TidbInitializers.
	Items []TidbInitializer `json:"items"`
}

// TidbInitializerSpec is what the initializer Job does to the cluster.
type TidbInitializerSpec struct {
	// Image of the initializer Job, an image with python and MySQLdb such as tnir/mysqlclient.
	Image string `json:"image"`

	// Cluster is the TidbCluster to initialize.
	Cluster TidbClusterRef `json:"cluster"`

	// ImagePullPolicy of the Job's container.
	// +optional
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy *corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets of the Job's pod.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// PermitHost is the host root may connect from after initialization; any host (%) when unset.
	// +optional
	PermitHost *string `json:"permitHost,omitempty"`

	// InitSql is SQL run once after the password is set.
	// +optional
	InitSql *string `json:"initSql,omitempty"` //nolint:revive // v1.6's JSON and Go name

	// InitSqlConfigMap names a ConfigMap whose key init-sql holds the SQL to
	// run; it wins over initSql.
	// +optional
	InitSqlConfigMap *string `json:"initSqlConfigMap,omitempty"` //nolint:revive // v1.6's JSON and Go name

	// PasswordSecret names a Secret whose keys are user names and whose values
	// are their passwords; the user root gets its password set, others are created.
	// +optional
	PasswordSecret *string `json:"passwordSecret,omitempty"`

	// Resources of the Job's container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Timezone (TZ) of the Job's container; UTC by default.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Timezone string `json:"timezone,omitempty"`

	// TLSClientSecretName is a Secret with a client certificate (ca.crt,
	// tls.crt, tls.key) used when TiDB requires TLS from its clients.
	// +optional
	TLSClientSecretName *string `json:"tlsClientSecretName,omitempty"`

	// Tolerations of the Job's pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// NodeSelector of the Job's pod.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// PodSecurityContext of the Job's pod (a core/v1 PodSecurityContext, not expanded in this schema).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// ServiceAccountName of the Job's pod.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// InitializePhase is the phase of a TidbInitializer, mirrored from its Job.
// +kubebuilder:validation:Enum=Pending;Running;Completed;Failed
type InitializePhase string

const (
	// InitializePhasePending means the Job is not created yet or waits for the cluster.
	InitializePhasePending InitializePhase = "Pending"
	// InitializePhaseRunning means the Job's pod is running.
	InitializePhaseRunning InitializePhase = "Running"
	// InitializePhaseCompleted means the Job succeeded; the initializer never runs again.
	InitializePhaseCompleted InitializePhase = "Completed"
	// InitializePhaseFailed means the Job failed.
	InitializePhaseFailed InitializePhase = "Failed"
)

// TidbInitializerStatus is the initializer Job's status plus the phase, as in
// v1.6 (which inlines the batch/v1 JobStatus).
type TidbInitializerStatus struct {
	batchv1.JobStatus `json:",inline"`

	// Phase is Pending, Running, Completed or Failed.
	// +optional
	Phase InitializePhase `json:"phase,omitempty"`
}
