package backup

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

// Keys of the storage Secrets (docs/backup.md), with the TiDB Operator's names.
const (
	s3AccessKey      = "access_key"
	s3SecretKey      = "secret_key"
	gcsCredentialKey = "credentials"
)

// azureSecretKeys are the env vars of an Azure Blob Secret, each read from
// the Secret key of the same name when present: a shared key
// (AZURE_STORAGE_KEY), an Azure AD client (AZURE_CLIENT_ID,
// AZURE_CLIENT_SECRET, AZURE_TENANT_ID) or a SAS token.
var azureSecretKeys = []string{
	"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_CLIENT_ID",
	"AZURE_CLIENT_SECRET", "AZURE_TENANT_ID", "AZURE_STORAGE_SAS_TOKEN",
}

// jobEnv returns the env of every backup-manager container: NAMESPACE and
// POD_NAME from the downward API, then the credentials of sp (none for IAM,
// a provider without secretName, and local storage). With useKMS an S3
// provider's region is also AWS_DEFAULT_REGION, as the TiDB Operator v1.6
// passes it (its image then KMS-decrypts the environment); a GCS provider's
// ACLs, location and storage class are GCS_OBJECT_ACL, GCS_BUCKET_ACL,
// GCS_LOCATION and GCS_STORAGE_CLASS when set, v1.6's names. Pure.
func jobEnv(sp v1alpha1.StorageProvider, useKMS bool) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	switch {
	case sp.S3 != nil:
		if useKMS && sp.S3.Region != "" {
			env = append(env, corev1.EnvVar{Name: "AWS_DEFAULT_REGION", Value: sp.S3.Region})
		}
		if sp.S3.SecretName != "" {
			env = append(env,
				secretEnv("AWS_ACCESS_KEY_ID", sp.S3.SecretName, s3AccessKey, false),
				secretEnv("AWS_SECRET_ACCESS_KEY", sp.S3.SecretName, s3SecretKey, false))
		}
	case sp.Gcs != nil:
		env = append(env, gcsEnv(sp.Gcs)...)
	case sp.Azblob != nil:
		if sp.Azblob.StorageAccount != "" {
			env = append(env, corev1.EnvVar{Name: "AZURE_STORAGE_ACCOUNT", Value: sp.Azblob.StorageAccount})
		}
		if sp.Azblob.SecretName != "" {
			for _, k := range azureSecretKeys {
				if k == "AZURE_STORAGE_ACCOUNT" && sp.Azblob.StorageAccount != "" {
					continue
				}
				env = append(env, secretEnv(k, sp.Azblob.SecretName, k, true))
			}
		}
	}
	return env
}

// gcsEnv is the env of a GCS provider: GCS_PROJECT_ID, the set ones of
// GCS_OBJECT_ACL, GCS_BUCKET_ACL, GCS_LOCATION and GCS_STORAGE_CLASS, and
// the mounted key file's path with secretName.
func gcsEnv(g *v1alpha1.GcsStorageProvider) []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: "GCS_PROJECT_ID", Value: g.ProjectId}}
	for _, kv := range []struct{ name, value string }{
		{"GCS_OBJECT_ACL", g.ObjectAcl}, {"GCS_BUCKET_ACL", g.BucketAcl},
		{"GCS_LOCATION", g.Location}, {"GCS_STORAGE_CLASS", g.StorageClass},
	} {
		if kv.value != "" {
			env = append(env, corev1.EnvVar{Name: kv.name, Value: kv.value})
		}
	}
	if g.SecretName != "" {
		env = append(env, corev1.EnvVar{Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: gcsKeyDir + "/" + gcsCredentialKey})
	}
	return env
}

// secretEnv is the env var name read from key of Secret secret.
func secretEnv(name, secret, key string, optional bool) corev1.EnvVar {
	ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}
	if optional {
		ref.Optional = ptr.To(true)
	}
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}}
}

// tikvImage returns the image TiKV of tc runs, as the cluster's defaults
// resolve it.
func tikvImage(tc *v1alpha1.TidbCluster) string {
	return defaulting.NewComponentAccessor(tc, defaulting.ComponentTiKV).Image()
}
