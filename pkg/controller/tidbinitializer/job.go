package tidbinitializer

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// The contract with the Job's program, `/backup-manager tidb-initializer`
// (cmd/backup-manager, package initializer): its flags, the paths the
// Secrets and the ConfigMap are mounted at, and the env of the inline SQL.
const (
	// Command is the program of the Job's container, in the operator's image.
	Command = "/backup-manager"
	// Subcommand is its first argument.
	Subcommand = "tidb-initializer"
	// ContainerName is the Job's only container.
	ContainerName = "initializer"
	// InitSQLKey is the key of initSqlConfigMap holding the SQL.
	InitSQLKey = "init-sql"
	// InitSQLEnv carries spec.initSql when no initSqlConfigMap is set.
	InitSQLEnv = "INIT_SQL"
	// PasswordDir, InitSQLDir and TLSDir are where passwordSecret,
	// initSqlConfigMap and the TiDB client certificate are mounted.
	PasswordDir = "/etc/tidb-initializer/password" //nolint:gosec // a mount path, not a credential
	InitSQLDir  = "/etc/tidb-initializer/init-sql"
	TLSDir      = "/var/lib/tidb-client-tls"
	// TLSSkipCAFlag, given with --tls-dir when
	// spec.tidb.tlsClient.skipInternalClientCA, has the program accept
	// TiDB's certificate unverified; the mounted Secret then needs no ca.crt
	// (its tls.crt/tls.key are still the client certificate).
	TLSSkipCAFlag = "tls-skip-ca"

	passwordVolume = "password"
	initSQLVolume  = "init-sql"
	tlsVolume      = "tidb-client-tls"
	defaultPort    = 4000
	defaultTZ      = "UTC"
)

// sqlHost returns where the Job reaches tc's MySQL port: the client Service
// `<tc>-tidb.<ns>.svc` on spec.tidb.service.port (4000 by default) when
// spec.tidb.service is set, else the headless `<tc>-tidb-peer.<ns>.svc` on
// 4000, because the operator creates no client Service without it. A
// clusterDomain of the reference is appended.
func sqlHost(ti *v1alpha1.TidbInitializer, tc *v1alpha1.TidbCluster) (string, int32) {
	service, port := names.Peer(tc.Name, names.TiDB), int32(defaultPort)
	if svc := tc.Spec.TiDB.Service; svc != nil {
		service = names.Member(tc.Name, names.TiDB)
		if svc.Port != nil {
			port = *svc.Port
		}
	}
	host := service + "." + tc.Namespace + ".svc"
	if d := ti.Spec.Cluster.ClusterDomain; d != "" {
		host += "." + d
	}
	return host, port
}

// tlsSecretName returns the TiDB client certificate the Job mounts:
// tlsClientSecretName, else `<tc>-tidb-client-secret`, and "" when tc's
// TiDB does not take TLS clients (spec.tidb.tlsClient.enabled false).
func tlsSecretName(ti *v1alpha1.TidbInitializer, tc *v1alpha1.TidbCluster) string {
	if c := tc.Spec.TiDB.TLSClient; c == nil || !c.Enabled {
		return ""
	}
	if s := ti.Spec.TLSClientSecretName; s != nil && *s != "" {
		return *s
	}
	return names.Member(tc.Name, names.TiDB) + "-client-secret"
}

// jobArgs returns the program's arguments after Command.
func jobArgs(ti *v1alpha1.TidbInitializer, tc *v1alpha1.TidbCluster) []string {
	host, port := sqlHost(ti, tc)
	args := []string{Subcommand, "--host=" + host, "--port=" + strconv.Itoa(int(port))}
	if isSet(ti.Spec.PasswordSecret) {
		args = append(args, "--password-dir="+PasswordDir)
	}
	if isSet(ti.Spec.InitSqlConfigMap) {
		args = append(args, "--init-sql-file="+InitSQLDir+"/"+InitSQLKey)
	}
	if isSet(ti.Spec.PermitHost) {
		args = append(args, "--permit-host="+*ti.Spec.PermitHost)
	}
	if tlsSecretName(ti, tc) != "" {
		args = append(args, "--tls-dir="+TLSDir)
		if tc.Spec.TiDB.TLSClient.SkipInternalClientCA {
			args = append(args, "--"+TLSSkipCAFlag)
		}
	}
	return args
}

// jobEnv returns TZ (spec.timezone, UTC by default) and, when the SQL is
// inline (no initSqlConfigMap, which wins), INIT_SQL.
func jobEnv(ti *v1alpha1.TidbInitializer) []corev1.EnvVar {
	tz := ti.Spec.Timezone
	if tz == "" {
		tz = defaultTZ
	}
	env := []corev1.EnvVar{{Name: "TZ", Value: tz}}
	if !isSet(ti.Spec.InitSqlConfigMap) && isSet(ti.Spec.InitSql) {
		env = append(env, corev1.EnvVar{Name: InitSQLEnv, Value: *ti.Spec.InitSql})
	}
	return env
}

// jobVolumes returns the volumes and mounts of passwordSecret,
// initSqlConfigMap and the TiDB client certificate, each only when used.
func jobVolumes(ti *v1alpha1.TidbInitializer, tc *v1alpha1.TidbCluster) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(name, dir string, src corev1.VolumeSource) {
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: src})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true})
	}
	if isSet(ti.Spec.PasswordSecret) {
		add(passwordVolume, PasswordDir, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: *ti.Spec.PasswordSecret}})
	}
	if isSet(ti.Spec.InitSqlConfigMap) {
		add(initSQLVolume, InitSQLDir, corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: *ti.Spec.InitSqlConfigMap},
			Items:                []corev1.KeyToPath{{Key: InitSQLKey, Path: InitSQLKey}},
		}})
	}
	if s := tlsSecretName(ti, tc); s != "" {
		add(tlsVolume, TLSDir, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s}})
	}
	return vols, mounts
}

// NewJob builds the Job `<tc>-tidb-initializer` of ti for tc, running
// Command in image: backoffLimit 0 (the program waits for TiDB itself, and a
// failed run is retried by deleting the Job), restartPolicy Never, no
// service account token (the program never calls the API), controlled by
// ti. Pure.
func NewJob(ti *v1alpha1.TidbInitializer, tc *v1alpha1.TidbCluster, image string) *batchv1.Job {
	vols, mounts := jobVolumes(ti, tc)
	pull := corev1.PullIfNotPresent
	if ti.Spec.ImagePullPolicy != nil {
		pull = *ti.Spec.ImagePullPolicy
	}
	c := corev1.Container{
		Name:            ContainerName,
		Image:           image,
		ImagePullPolicy: pull,
		Command:         []string{Command},
		Args:            jobArgs(ti, tc),
		Env:             jobEnv(ti),
		VolumeMounts:    mounts,
	}
	if ti.Spec.Resources != nil {
		c.Resources = *ti.Spec.Resources
	}
	labels := label.NewInitializer(tc.Name, ti.Name).Labels()
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.Initializer(tc.Name),
			Namespace: ti.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.SchemeGroupVersion.String(),
				Kind:               Kind,
				Name:               ti.Name,
				UID:                ti.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: label.NewInitializer(tc.Name, ti.Name).Labels()},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           ti.Spec.ServiceAccountName,
					AutomountServiceAccountToken: ptr.To(false),
					Containers:                   []corev1.Container{c},
					Volumes:                      vols,
					NodeSelector:                 ti.Spec.NodeSelector,
					Tolerations:                  ti.Spec.Tolerations,
					SecurityContext:              ti.Spec.PodSecurityContext,
					ImagePullSecrets:             ti.Spec.ImagePullSecrets,
				},
			},
		},
	}
}

func isSet(s *string) bool { return s != nil && *s != "" }
