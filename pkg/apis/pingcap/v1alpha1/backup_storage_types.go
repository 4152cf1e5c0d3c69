package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// StorageProvider says where backup data lives; exactly one provider is set.
// +kubebuilder:validation:XValidation:rule="[has(self.s3), has(self.gcs), has(self.azblob), has(self.local)].filter(p, p).size() <= 1",message="set at most one storage provider: s3, gcs, azblob or local"
type StorageProvider struct {
	// S3 is an S3-compatible object store.
	// +optional
	S3 *S3StorageProvider `json:"s3,omitempty"`
	// Gcs is Google Cloud Storage.
	// +optional
	Gcs *GcsStorageProvider `json:"gcs,omitempty"`
	// Azblob is Azure Blob Storage.
	// +optional
	Azblob *AzblobStorageProvider `json:"azblob,omitempty"`
	// Local is a volume mounted into the job's pod.
	// +optional
	Local *LocalStorageProvider `json:"local,omitempty"`
}

// S3StorageProvider is an S3-compatible object store.
// +kubebuilder:validation:XValidation:rule="(has(self.bucket) && self.bucket.size() > 0) || (has(self.path) && self.path.size() > 0)",message="set bucket (or the deprecated path)",fieldPath=".bucket",reason=FieldValueRequired
type S3StorageProvider struct {
	// Provider is the S3 flavour: aws, ceph, minio, alibaba, netease, digitalocean, tencent or other.
	Provider string `json:"provider"`
	// Region of the bucket.
	// +optional
	Region string `json:"region,omitempty"`
	// Path is the full path, s3://bucket/prefix. Deprecated: use bucket and prefix.
	// +optional
	Path string `json:"path,omitempty"`
	// Bucket holds the backup data.
	// +optional
	Bucket string `json:"bucket,omitempty"`
	// Endpoint of a non-AWS service.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// StorageClass of the stored objects.
	// +optional
	StorageClass string `json:"storageClass,omitempty"`
	// Acl of the stored objects.
	// +optional
	Acl string `json:"acl,omitempty"`
	// SecretName holds access_key and secret_key; IAM is used when empty.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// Prefix inside the bucket.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// SSE is the server-side encryption algorithm.
	// +optional
	SSE string `json:"sse,omitempty"`
	// Options are extra rclone options.
	// +optional
	Options []string `json:"options,omitempty"`
	// ForcePathStyle addresses the bucket in the path (endpoint/bucket)
	// rather than the host name; BR's default (true) when unset.
	// +optional
	ForcePathStyle *bool `json:"forcePathStyle,omitempty"`
}

// GcsStorageProvider is Google Cloud Storage.
type GcsStorageProvider struct {
	// ProjectId of the bucket.
	ProjectId string `json:"projectId"`
	// Location of the bucket.
	// +optional
	Location string `json:"location,omitempty"`
	// Path is the full path. Deprecated: use bucket and prefix.
	// +optional
	Path string `json:"path,omitempty"`
	// Bucket holds the backup data.
	// +optional
	Bucket string `json:"bucket,omitempty"`
	// StorageClass of the stored objects.
	// +optional
	StorageClass string `json:"storageClass,omitempty"`
	// ObjectAcl of the stored objects.
	// +optional
	ObjectAcl string `json:"objectAcl,omitempty"`
	// BucketAcl of a created bucket.
	// +optional
	BucketAcl string `json:"bucketAcl,omitempty"`
	// SecretName holds credentials.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// Prefix inside the bucket.
	// +optional
	Prefix string `json:"prefix,omitempty"`
}

// AzblobStorageProvider is Azure Blob Storage.
type AzblobStorageProvider struct {
	// Path is the full path. Deprecated: use container and prefix.
	// +optional
	Path string `json:"path,omitempty"`
	// Container holds the backup data.
	// +optional
	Container string `json:"container,omitempty"`
	// AccessTier of the stored blobs: Hot, Cool or Archive.
	// +optional
	AccessTier string `json:"accessTier,omitempty"`
	// SecretName holds credentials.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// Prefix inside the container.
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// SasToken is a shared access signature.
	// +optional
	SasToken string `json:"sasToken,omitempty"`
	// StorageAccount of the container.
	// +optional
	StorageAccount string `json:"storageAccount,omitempty"`
}

// LocalStorageProvider is a volume mounted into the job's pod.
type LocalStorageProvider struct {
	// Volume to mount (core/v1 Volume, not expanded in this schema).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Volume corev1.Volume `json:"volume"`
	// VolumeMount of the volume (core/v1 VolumeMount, not expanded in this schema).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	VolumeMount corev1.VolumeMount `json:"volumeMount"`
	// Prefix inside the volume.
	// +optional
	Prefix string `json:"prefix,omitempty"`
}

// BRConfig configures the BR tool.
type BRConfig struct {
	// Cluster is the TidbCluster name to back up or restore.
	Cluster string `json:"cluster"`
	// ClusterNamespace of the TidbCluster; the CR's namespace when empty.
	// +optional
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
	// DB limits a db or table backup to one database.
	// +optional
	DB string `json:"db,omitempty"`
	// Table limits a table backup to one table.
	// +optional
	Table string `json:"table,omitempty"`
	// LogLevel of BR.
	// +optional
	LogLevel string `json:"logLevel,omitempty"`
	// StatusAddr of BR's status server.
	// +optional
	StatusAddr string `json:"statusAddr,omitempty"`
	// Concurrency of BR's workers.
	// +optional
	Concurrency *uint32 `json:"concurrency,omitempty"`
	// RateLimit in MB/s per TiKV.
	// +optional
	RateLimit *uint `json:"rateLimit,omitempty"`
	// TimeAgo backs up the data as of this long ago.
	// +optional
	TimeAgo string `json:"timeAgo,omitempty"`
	// Checksum verifies the data after backup or restore.
	// +optional
	Checksum *bool `json:"checksum,omitempty"`
	// CheckRequirements checks versions before running.
	// +optional
	CheckRequirements *bool `json:"checkRequirements,omitempty"`
	// SendCredToTikv sends the storage credentials to TiKV.
	// +optional
	SendCredToTikv *bool `json:"sendCredToTikv,omitempty"`
	// OnLine restores without blocking the cluster.
	// +optional
	OnLine *bool `json:"onLine,omitempty"`
	// Options are extra BR arguments.
	// +optional
	Options []string `json:"options,omitempty"`
}

// TiDBAccessConfig is how a job logs in to TiDB (non-BR paths).
type TiDBAccessConfig struct {
	// Host of TiDB.
	Host string `json:"host"`
	// Port of TiDB; 4000 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
	// User to log in as; root by default.
	// +optional
	User string `json:"user,omitempty"`
	// SecretName holds the password under key "password".
	SecretName string `json:"secretName"`
	// TLSClientSecretName holds a client certificate.
	// +optional
	TLSClientSecretName *string `json:"tlsClientSecretName,omitempty"`
}

// BackoffRetryPolicy bounds retries of a failed snapshot backup.
type BackoffRetryPolicy struct {
	// MinRetryDuration is the first retry delay, a Go duration; 300s by default.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))*)$`
	MinRetryDuration string `json:"minRetryDuration,omitempty"`
	// MaxRetryTimes is the maximum number of retries; 2 by default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRetryTimes int `json:"maxRetryTimes,omitempty"`
	// RetryTimeout stops retrying after this long, a Go duration; 30m by default.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))*)$`
	RetryTimeout string `json:"retryTimeout,omitempty"`
}
