package tidb

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Token-based authentication (spec.tidb.tokenBasedAuthEnabled, TiDB's
// tidb_auth_token): the user's Secret "<tc>-tidb-auth-token-jwks-secret"
// is mounted read-only at authTokenDir, and TiDB's config points
// security.auth-token-jwks at its key authTokenJWKSKey, as the TiDB
// Operator lays it out.
const (
	// AuthTokenJWKSConfigKey is TiDB's config key naming the JWKS file.
	AuthTokenJWKSConfigKey = "security.auth-token-jwks"

	authTokenVolume  = "tidb-auth-token"           //nolint:gosec // G101: a volume name, no credential
	authTokenDir     = "/var/lib/tidb-auth-token"  //nolint:gosec // G101: a mount path, no credential
	authTokenJWKSKey = "tidb_auth_token_jwks.json" //nolint:gosec // G101: a file name holding public keys
)

// AuthTokenJWKSSecret returns "<tc>-tidb-auth-token-jwks-secret", the
// Secret holding the JSON Web Key Set under tidb_auth_token_jwks.json.
func AuthTokenJWKSSecret(tc string) string {
	return names.Member(tc, names.TiDB) + "-auth-token-jwks-secret"
}

func tokenAuthEnabled(tc *v1alpha1.TidbCluster) bool {
	e := tc.Spec.TiDB.TokenBasedAuthEnabled
	return e != nil && *e
}

// authTokenVolumes mounts the JWKS Secret into main and returns its pod
// volume; nothing unless tokenBasedAuthEnabled.
func authTokenVolumes(tc *v1alpha1.TidbCluster, main *corev1.Container) []corev1.Volume {
	if !tokenAuthEnabled(tc) {
		return nil
	}
	main.VolumeMounts = append(main.VolumeMounts,
		corev1.VolumeMount{Name: authTokenVolume, MountPath: authTokenDir, ReadOnly: true})
	return []corev1.Volume{{Name: authTokenVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: AuthTokenJWKSSecret(tc.Name)},
	}}}
}
