package tidbinitializer

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// fullInitializer sets every pod field of the spec.
func fullInitializer() *v1alpha1.TidbInitializer {
	ti := newInitializer()
	ti.Spec.InitSqlConfigMap = ptr.To("init-sql")
	ti.Spec.PermitHost = ptr.To("10.0.0.%")
	ti.Spec.TLSClientSecretName = ptr.To("my-client-tls")
	ti.Spec.Timezone = "Asia/Shanghai"
	ti.Spec.ImagePullPolicy = ptr.To(corev1.PullAlways)
	ti.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	ti.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	ti.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "tidb", Effect: corev1.TaintEffectNoSchedule}}
	ti.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](65532)}
	ti.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
	ti.Spec.ServiceAccountName = "initializer"
	return ti
}

// TestJobGolden pins the whole Job of a minimal and of a full spec.
func TestJobGolden(t *testing.T) {
	t.Parallel()
	tls := newCluster(true)
	tls.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{Enabled: true}
	golden.Assert(t, "minimal", NewJob(newInitializer(), newCluster(true), testImage))
	golden.Assert(t, "full", NewJob(fullInitializer(), tls, testImage))
}

func TestJobArgsAndEnv(t *testing.T) {
	t.Parallel()
	noService := newCluster(true)
	noService.Spec.TiDB.Service = nil
	port := newCluster(true)
	port.Spec.TiDB.Service.Port = ptr.To[int32](3306)
	tlsDefault := newCluster(true)
	tlsDefault.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{Enabled: true}
	skipCA := newCluster(true)
	skipCA.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{Enabled: true, SkipInternalClientCA: true}
	skipNoTLS := newCluster(true)
	skipNoTLS.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{SkipInternalClientCA: true}
	bare := newInitializer()
	bare.Spec.PasswordSecret, bare.Spec.InitSql = nil, nil
	domain := newInitializer()
	domain.Spec.Cluster.ClusterDomain = "cluster.local"
	cases := []struct {
		name    string
		ti      *v1alpha1.TidbInitializer
		tc      *v1alpha1.TidbCluster
		args    []string
		env     []corev1.EnvVar
		volumes []string
	}{
		{"client Service, secret, inline SQL", newInitializer(), newCluster(true),
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc", "--port=4000", "--password-dir=" + PasswordDir},
			[]corev1.EnvVar{{Name: "TZ", Value: "UTC"}, {Name: InitSQLEnv, Value: "CREATE DATABASE app;"}},
			[]string{"password"}},
		{"no client Service: the headless one", bare, noService,
			[]string{"tidb-initializer", "--host=demo-tidb-peer.ns.svc", "--port=4000"},
			[]corev1.EnvVar{{Name: "TZ", Value: "UTC"}}, nil},
		{"the Service's port", bare, port,
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc", "--port=3306"},
			[]corev1.EnvVar{{Name: "TZ", Value: "UTC"}}, nil},
		{"clusterDomain", domain, newCluster(true),
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc.cluster.local", "--port=4000", "--password-dir=" + PasswordDir},
			[]corev1.EnvVar{{Name: "TZ", Value: "UTC"}, {Name: InitSQLEnv, Value: "CREATE DATABASE app;"}},
			[]string{"password"}},
		{"ConfigMap wins over initSql; TLS from tlsClientSecretName; permitHost", fullInitializer(), tlsDefault,
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc", "--port=4000", "--password-dir=" + PasswordDir,
				"--init-sql-file=" + InitSQLDir + "/init-sql", "--permit-host=10.0.0.%", "--tls-dir=" + TLSDir},
			[]corev1.EnvVar{{Name: "TZ", Value: "Asia/Shanghai"}},
			[]string{"password", "init-sql", "tidb-client-tls"}},
		{"skipInternalClientCA: the client Secret still mounted, TiDB not verified", bare, skipCA,
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc", "--port=4000", "--tls-dir=" + TLSDir, "--" + TLSSkipCAFlag},
			[]corev1.EnvVar{{Name: "TZ", Value: "UTC"}},
			[]string{"tidb-client-tls"}},
		{"skipInternalClientCA without tlsClient.enabled: no TLS at all", bare, skipNoTLS,
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc", "--port=4000"},
			[]corev1.EnvVar{{Name: "TZ", Value: "UTC"}}, nil},
		{"no TLS without tlsClient, whatever tlsClientSecretName says", fullInitializer(), newCluster(true),
			[]string{"tidb-initializer", "--host=demo-tidb.ns.svc", "--port=4000", "--password-dir=" + PasswordDir,
				"--init-sql-file=" + InitSQLDir + "/init-sql", "--permit-host=10.0.0.%"},
			[]corev1.EnvVar{{Name: "TZ", Value: "Asia/Shanghai"}},
			[]string{"password", "init-sql"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			job := NewJob(c.ti, c.tc, testImage)
			ctr := job.Spec.Template.Spec.Containers[0]
			if !slices.Equal(ctr.Args, c.args) {
				t.Errorf("args %v, want %v", ctr.Args, c.args)
			}
			if !slices.Equal(ctr.Env, c.env) {
				t.Errorf("env %v, want %v", ctr.Env, c.env)
			}
			var vols []string
			for _, v := range job.Spec.Template.Spec.Volumes {
				vols = append(vols, v.Name)
			}
			if !slices.Equal(vols, c.volumes) {
				t.Errorf("volumes %v, want %v", vols, c.volumes)
			}
			if len(ctr.VolumeMounts) != len(vols) {
				t.Errorf("%d mounts for %d volumes", len(ctr.VolumeMounts), len(vols))
			}
		})
	}
}

// TestJobIdentity: the name, labels, owner, image and command the rest of
// the operator and the program rely on.
func TestJobIdentity(t *testing.T) {
	t.Parallel()
	job := NewJob(newInitializer(), newCluster(true), testImage)
	if job.Name != "demo-tidb-initializer" || job.Namespace != "ns" {
		t.Errorf("Job %s/%s, want ns/demo-tidb-initializer", job.Namespace, job.Name)
	}
	want := map[string]string{"app.kubernetes.io/component": "tidb-initializer", "app.kubernetes.io/managed-by": "tidb-operator",
		"app.kubernetes.io/instance": "demo", "tidb.pingcap.com/initializer": "init"}
	for k, v := range want {
		if job.Labels[k] != v || job.Spec.Template.Labels[k] != v {
			t.Errorf("label %s = %q (pod %q), want %q", k, job.Labels[k], job.Spec.Template.Labels[k], v)
		}
	}
	ref := job.OwnerReferences[0]
	if ref.Kind != "TidbInitializer" || ref.Name != "init" || ref.UID != "ti-uid" || !*ref.Controller {
		t.Errorf("owner %+v", ref)
	}
	ctr := job.Spec.Template.Spec.Containers[0]
	if ctr.Image != testImage || !slices.Equal(ctr.Command, []string{"/backup-manager"}) || ctr.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("container image %s command %v pull %s", ctr.Image, ctr.Command, ctr.ImagePullPolicy)
	}
	if *job.Spec.BackoffLimit != 0 || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		*job.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Errorf("backoffLimit %d restartPolicy %s automount %t", *job.Spec.BackoffLimit,
			job.Spec.Template.Spec.RestartPolicy, *job.Spec.Template.Spec.AutomountServiceAccountToken)
	}
}

func TestTLSSecretName(t *testing.T) {
	t.Parallel()
	tc := newCluster(true)
	ti := newInitializer()
	if got := tlsSecretName(ti, tc); got != "" {
		t.Errorf("without tlsClient: %q, want none", got)
	}
	tc.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{Enabled: true}
	if got := tlsSecretName(ti, tc); got != "demo-tidb-client-secret" {
		t.Errorf("default: %q, want demo-tidb-client-secret", got)
	}
	ti.Spec.TLSClientSecretName = ptr.To("mine")
	if got := tlsSecretName(ti, tc); got != "mine" {
		t.Errorf("named: %q, want mine", got)
	}
}
