package pd

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// Where PD's dashboard finds the client certificate it shows TiDB's MySQL port when TiDB serves TLS.
const (
	tidbClientTLSDir    = "/var/lib/tidb-client-tls"
	tidbClientTLSVolume = "tidb-client-tls"
)

// dashboardTiDBTLS reports whether PD's dashboard connects to TiDB over TLS: TiDB serves its MySQL port
// with TLS (spec.tidb.tlsClient.enabled), the cluster's clients do not skip it
// (label.AnnSkipTLSWhenConnectTiDB), and PD has a dashboard (v4.0 and later; an unreadable version
// counts as new).
func dashboardTiDBTLS(tc *v1alpha1.TidbCluster) bool {
	db := tc.Spec.TiDB
	if db == nil || db.TLSClient == nil || !db.TLSClient.Enabled {
		return false
	}
	if _, skip := tc.Annotations[label.AnnSkipTLSWhenConnectTiDB]; skip {
		return false
	}
	version := defaulting.NewComponentAccessor(tc, defaulting.ComponentPD).Version()
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	return err != nil || major >= 4
}

// dashboardClientSecret is the Secret of the dashboard's TiDB client certificate:
// spec.pd.tlsClientSecretName, else <tc>-tidb-client-secret.
func dashboardClientSecret(tc *v1alpha1.TidbCluster) string {
	if s := tc.Spec.PD.TLSClientSecretName; s != nil && *s != "" {
		return *s
	}
	return tc.Name + "-tidb-client-secret"
}

// dashboardTLSConfig adds the dashboard's TiDB client certificate paths to forced when
// dashboardTiDBTLS. With spec.tidb.tlsClient.skipInternalClientCA the CA path is left out, as the
// TiDB Operator v1 leaves it out, so the Secret needs no ca.crt: PD then checks TiDB's certificate
// against the system's roots, not the Secret's CA.
func dashboardTLSConfig(tc *v1alpha1.TidbCluster, forced map[string]any) {
	if !dashboardTiDBTLS(tc) {
		return
	}
	if !tc.Spec.TiDB.TLSClient.SkipInternalClientCA {
		forced["dashboard.tidb-cacert-path"] = tidbClientTLSDir + "/ca.crt"
	}
	forced["dashboard.tidb-cert-path"] = tidbClientTLSDir + "/tls.crt"
	forced["dashboard.tidb-key-path"] = tidbClientTLSDir + "/tls.key"
}

// dashboardTLSVolume mounts the dashboard's TiDB client certificate into main and returns its volume
// when dashboardTiDBTLS, else nil.
func dashboardTLSVolume(tc *v1alpha1.TidbCluster, main *corev1.Container) []corev1.Volume {
	if !dashboardTiDBTLS(tc) {
		return nil
	}
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: tidbClientTLSVolume, MountPath: tidbClientTLSDir, ReadOnly: true})
	return []corev1.Volume{{Name: tidbClientTLSVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: dashboardClientSecret(tc)}}}}
}
