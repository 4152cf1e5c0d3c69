package dashboard

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func newDashboard() *v1alpha1.TidbDashboard {
	version := "v8.5.0"
	return &v1alpha1.TidbDashboard{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbDashboardSpec{
			ComponentSpec: v1alpha1.ComponentSpec{Version: &version},
			ResourceRequirements: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("10Gi"), corev1.ResourceCPU: resource.MustParse("1")}},
			Clusters: []v1alpha1.TidbClusterRef{{Name: "basic"}},
		},
	}
}

func newCluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{Version: "v8.5.0"}}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	yes, prefix, class := true, "/dashboard", "fast"
	cases := map[string]func(td *v1alpha1.TidbDashboard, tc *v1alpha1.TidbCluster){
		"basic": func(*v1alpha1.TidbDashboard, *v1alpha1.TidbCluster) {},
		"tls-and-switches": func(td *v1alpha1.TidbDashboard, tc *v1alpha1.TidbCluster) {
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
			tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
			td.Spec.PathPrefix, td.Spec.DisableKeyVisualizer, td.Spec.Experimental = &prefix, &yes, &yes
			td.Spec.Telemetry, td.Spec.ListenOnLocalhostOnly = &yes, &yes
			td.Spec.BaseImage, td.Spec.StorageClassName = "registry/dashboard", &class
			td.Spec.Service = v1alpha1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Annotations: map[string]string{"a": "b"}}
		},
		"pod-fields-no-storage": func(td *v1alpha1.TidbDashboard, _ *v1alpha1.TidbCluster) {
			td.Spec.Requests = nil
			td.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
			td.Spec.Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
			td.Spec.NodeSelector = map[string]string{"zone": "a"}
			td.Spec.AdditionalContainers = []corev1.Container{{Name: "sidecar", Image: "busybox"}}
			td.Spec.StorageVolumes = []v1alpha1.StorageVolume{{Name: "log", StorageSize: "1Gi", MountPath: "/log"}}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			td, tc := newDashboard(), newCluster()
			mutate(td, tc)
			sts, err := NewStatefulSet(td, tc)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, name, NewService(td), sts)
		})
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	td, tc := newDashboard(), newCluster()
	td.Spec.Clusters[0].Namespace = "other"
	tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	args := Args(td, tc)
	for _, want := range []string{"--pd=https://basic-pd.other:2379", "--feature-version=8.5.0", "--cluster-ca=" + ClusterTLSDir + "/ca.crt"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if slices.ContainsFunc(args, func(a string) bool { return a == "--tidb-ca="+TiDBTLSDir+"/ca.crt" }) {
		t.Errorf("TiDB client TLS without tidb.tlsClient: %v", args)
	}
}

func TestStatefulSetErrorsOnBadStorageVolume(t *testing.T) {
	t.Parallel()
	td := newDashboard()
	td.Spec.StorageVolumes = []v1alpha1.StorageVolume{{Name: "log", StorageSize: "lots"}}
	if _, err := NewStatefulSet(td, newCluster()); err == nil {
		t.Fatal("no error for an unreadable storage size")
	}
}
