package pd

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func basicTC() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{
			Version: "v8.5.0",
			PD: &v1alpha1.PDSpec{
				Replicas: 3,
				ResourceRequirements: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi"), corev1.ResourceCPU: resource.MustParse("1")},
				},
				Config: v1alpha1.NewConfig(map[string]any{"replication": map[string]any{"max-replicas": int64(3)}}),
			},
		},
	}
}

func TestBuilderGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*v1alpha1.TidbCluster){
		"default": func(*v1alpha1.TidbCluster) {},
		"tls": func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
		},
		// mountClusterClientSecret: the operator's client certificate next
		// to PD's own (and before the dashboard's TiDB client certificate).
		"tls-cluster-client-secret": func(tc *v1alpha1.TidbCluster) {
			yes := true
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
			tc.Spec.PD.MountClusterClientSecret = &yes
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
		},
		// TiDB serves MySQL over TLS: PD's dashboard gets the TiDB client certificate.
		"tls-tidb-client": func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
		},
		"service-and-volumes": func(tc *v1alpha1.TidbCluster) {
			np := "pd-client"
			tc.Spec.PD.Service = &v1alpha1.ServiceSpec{Type: corev1.ServiceTypeNodePort, PortName: &np,
				Annotations: map[string]string{"example.com/lb": "internal"}}
			tc.Spec.PD.StorageVolumes = []v1alpha1.StorageVolume{{Name: "log", StorageSize: "2Gi"}}
			tc.Spec.PD.ReadinessProbe = &v1alpha1.Probe{}
			tc.Spec.ClusterDomain = "cluster.local"
			tc.Spec.PD.DataSubDir = "data"
		},
		// v1.6 fields: the main container's securityContext, no service
		// account token, and volume attributes classes on the PVC templates
		// (a storage volume inherits the component's unless it sets its own).
		"v16-fields": func(tc *v1alpha1.TidbCluster) {
			fast, slow, no := "fast", "slow", false
			tc.Spec.PD.VolumeAttributesClassName = &fast
			tc.Spec.PD.StorageVolumes = []v1alpha1.StorageVolume{{Name: "log", StorageSize: "2Gi"},
				{Name: "wal", StorageSize: "1Gi", VolumeAttributesClassName: &slow}}
			tc.Spec.PD.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
			tc.Spec.PD.AutomountServiceAccountToken = &no
		},
		"toml-string-config": func(tc *v1alpha1.TidbCluster) {
			cfg := &v1alpha1.Config{}
			if err := cfg.UnmarshalJSON([]byte(`"[log]\nlevel = \"warn\"\n[schedule]\nmax-store-down-time = \"30m\"\n"`)); err != nil {
				panic(err)
			}
			tc.Spec.PD.Config = cfg
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := basicTC()
			mutate(tc)
			defaulting.SetTidbClusterDefaults(tc)
			data, err := newConfigData(tc)
			if err != nil {
				t.Fatal(err)
			}
			sts, err := newStatefulSet(tc, "basic-pd-abcdef0")
			if err != nil {
				t.Fatal(err)
			}
			objs := []any{data}
			for _, s := range newServices(tc) {
				objs = append(objs, s)
			}
			golden.Assert(t, name, append(objs, sts)...)
		})
	}
}

func TestNoConfigMeansNoConfigMap(t *testing.T) {
	t.Parallel()
	tc := basicTC()
	tc.Spec.PD.Config = nil
	data, err := newConfigData(tc)
	if err != nil || data != nil {
		t.Fatalf("want no ConfigMap data, got %v, %v", data, err)
	}
}
