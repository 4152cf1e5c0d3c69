package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestValidateTidbClusterDataVolumes(t *testing.T) {
	t.Parallel()
	runClusterCases(t, []clusterCase{
		{name: "valid cluster", mutate: func(*v1alpha1.TidbCluster) {}},
		{name: "TiDB, TiCDC and TiProxy need no data volume", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB.Requests, tc.Spec.TiCDC.Requests, tc.Spec.TiProxy.Requests = nil, nil, nil
		}},
		{name: "PD without storage", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd.requests.storage"}}},
		{name: "TiKV without storage", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.Requests = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.tikv.requests.storage"}}},
		{name: "Pump without storage", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Pump.Requests = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pump.requests.storage"}}},
		{name: "zero storage", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.ResourceRequirements = storage("0") },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tikv.requests.storage"}}},
		{name: "negative storage", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.ResourceRequirements = storage("-1Gi") },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.pd.requests.storage"}}},
		{name: "TiFlash with several disks", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiFlash.StorageClaims = append(tc.Spec.TiFlash.StorageClaims, v1alpha1.StorageClaim{Resources: storage("1Ti")})
		}},
		{name: "TiFlash without disks", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiFlash.StorageClaims = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.tiflash.storageClaims"}}},
		{name: "TiFlash disk without size", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiFlash.StorageClaims = append(tc.Spec.TiFlash.StorageClaims, v1alpha1.StorageClaim{}, v1alpha1.StorageClaim{Resources: storage("0")})
		}, want: []fieldErr{
			{field.ErrorTypeRequired, "spec.tiflash.storageClaims[1].resources.requests.storage"},
			{field.ErrorTypeInvalid, "spec.tiflash.storageClaims[2].resources.requests.storage"},
		}},
	})
}

func TestValidateTidbClusterStorageVolumes(t *testing.T) {
	t.Parallel()
	vol := func(name, size string) v1alpha1.StorageVolume {
		return v1alpha1.StorageVolume{Name: name, StorageSize: size}
	}
	runClusterCases(t, []clusterCase{
		{name: "valid volumes on every component that has them", mutate: func(tc *v1alpha1.TidbCluster) {
			vols := []v1alpha1.StorageVolume{vol("log", "1Gi"), vol("raft-log", "500Mi")}
			s := &tc.Spec
			s.PD.StorageVolumes, s.PDMS[0].StorageVolumes, s.TiKV.StorageVolumes = vols, vols, vols
			s.TiDB.StorageVolumes, s.TiCDC.StorageVolumes, s.TiProxy.StorageVolumes = vols, vols, vols
		}},
		{name: "name not a DNS label", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiKV.StorageVolumes = []v1alpha1.StorageVolume{vol("Raft_Log", "1Gi")}
		},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tikv.storageVolumes[0].name"}}},
		{name: "name missing", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.StorageVolumes = []v1alpha1.StorageVolume{vol("", "1Gi")} },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd.storageVolumes[0].name"}}},
		{name: "duplicate name", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB.StorageVolumes = []v1alpha1.StorageVolume{vol("log", "1Gi"), vol("log", "2Gi")}
		}, want: []fieldErr{{field.ErrorTypeDuplicate, "spec.tidb.storageVolumes[1].name"}}},
		{name: "same name on two components", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB.StorageVolumes = []v1alpha1.StorageVolume{vol("log", "1Gi")}
			tc.Spec.TiCDC.StorageVolumes = []v1alpha1.StorageVolume{vol("log", "1Gi")}
		}},
		{name: "size missing", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiCDC.StorageVolumes = []v1alpha1.StorageVolume{vol("sort", "")}
		},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.ticdc.storageVolumes[0].storageSize"}}},
		{name: "size not a quantity", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiProxy.StorageVolumes = []v1alpha1.StorageVolume{vol("log", "ten gigs")}
		},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tiproxy.storageVolumes[0].storageSize"}}},
		{name: "size zero", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PDMS[0].StorageVolumes = []v1alpha1.StorageVolume{vol("log", "0")}
		},
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.pdms[0].storageVolumes[0].storageSize"}}},
	})
}

func TestValidateTidbClusterReplicas(t *testing.T) {
	t.Parallel()
	runClusterCases(t, []clusterCase{
		{name: "zero replicas", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.Replicas, tc.Spec.TiCDC.Replicas = 0, 0 }},
		{name: "negative TiDB", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.Replicas = -1 },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tidb.replicas"}}},
		{name: "negative PD micro-service", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PDMS[0].Replicas = -2 },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.pdms[0].replicas"}}},
		{name: "negative TiProxy", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiProxy.Replicas = -1 },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tiproxy.replicas"}}},
	})
}

func TestValidateTidbClusterEnv(t *testing.T) {
	t.Parallel()
	fieldRef := &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}
	secretRef := &corev1.SecretKeySelector{Key: "k"}
	setEnv := func(env ...corev1.EnvVar) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.Env = env }
	}
	runClusterCases(t, []clusterCase{
		{name: "plain and sourced values", mutate: setEnv(
			corev1.EnvVar{Name: "MY_VAR", Value: "1"},
			corev1.EnvVar{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: fieldRef}},
			corev1.EnvVar{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			corev1.EnvVar{Name: "CM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "k"}}},
			corev1.EnvVar{Name: "SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: secretRef}},
		)},
		{name: "reserved TZ", mutate: setEnv(corev1.EnvVar{Name: "TZ", Value: "UTC"}),
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tikv.env[0].name"}}},
		{name: "every reserved name", mutate: func(tc *v1alpha1.TidbCluster) {
			for _, n := range reservedEnvNames {
				tc.Spec.PD.Env = append(tc.Spec.PD.Env, corev1.EnvVar{Name: n})
			}
		}, want: func() []fieldErr {
			var want []fieldErr
			for i := range reservedEnvNames {
				want = append(want, fieldErr{field.ErrorTypeInvalid, field.NewPath("spec", "pd", "env").Index(i).Child("name").String()})
			}
			return want
		}()},
		{name: "reserved on discovery", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Discovery.Env = []corev1.EnvVar{{Name: "POD_NAME"}} },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.discovery.env[0].name"}}},
		{name: "unnamed", mutate: setEnv(corev1.EnvVar{Value: "x"}),
			want: []fieldErr{{field.ErrorTypeRequired, "spec.tikv.env[0].name"}}},
		{name: "empty valueFrom", mutate: setEnv(corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{}}),
			want: []fieldErr{{field.ErrorTypeRequired, "spec.tikv.env[0].valueFrom"}}},
		{name: "two sources", mutate: setEnv(corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{FieldRef: fieldRef, SecretKeyRef: secretRef}}),
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tikv.env[0].valueFrom"}}},
		{name: "file source", mutate: setEnv(corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{Key: "k"}}}),
			want: []fieldErr{{field.ErrorTypeForbidden, "spec.tikv.env[0].valueFrom.fileKeyRef"}}},
		{name: "value and valueFrom", mutate: setEnv(corev1.EnvVar{Name: "A", Value: "v", ValueFrom: &corev1.EnvVarSource{FieldRef: fieldRef}}),
			want: []fieldErr{{field.ErrorTypeForbidden, "spec.tikv.env[0].valueFrom"}}},
	})
}

func TestValidateTidbClusterTiKVEvictLeaderTimeout(t *testing.T) {
	t.Parallel()
	set := func(s string) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.EvictLeaderTimeout = ptr(s) }
	}
	want := []fieldErr{{field.ErrorTypeInvalid, "spec.tikv.evictLeaderTimeout"}}
	runClusterCases(t, []clusterCase{
		{name: "seconds", mutate: set("90s")},
		{name: "compound", mutate: set("1h30m")},
		{name: "words", mutate: set("15 minutes"), want: want},
		{name: "no unit", mutate: set("1500"), want: want},
		{name: "negative", mutate: set("-1m"), want: want},
	})
}

func TestValidateTidbClusterImages(t *testing.T) {
	t.Parallel()
	runClusterCases(t, []clusterCase{
		{name: "no image, base image or version runs the untagged default", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.Version, tc.Spec.PD.BaseImage = "", ""
		}},
		{name: "legacy image", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.Image = "reg.example/pd:v8.5.0" }},
		{name: "whitespace in image", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.Image = "pingcap/pd:v8 " },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.pd.image"}}},
		{name: "whitespace in base image", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.BaseImage = "pingcap /tikv" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tikv.baseImage"}}},
		{name: "whitespace in PD micro-service base image", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PDMS[0].BaseImage = ptr("pd\t") },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.pdms[0].baseImage"}}},
		{name: "whitespace in component version", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.Version = ptr("v8.5.0\n") },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tidb.version"}}},
		{name: "whitespace in cluster version", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Version = "v8 .5" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.version"}}},
		{name: "whitespace in helper image", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Helper.Image = ptr("busy box") },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.helper.image"}}},
		{name: "whitespace in discovery image", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Discovery.Image = " op" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.discovery.image"}}},
	})
}

func TestValidateTidbClusterTiDBService(t *testing.T) {
	t.Parallel()
	svc := func(f func(*v1alpha1.TiDBServiceSpec)) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { f(tc.Spec.TiDB.Service) }
	}
	runClusterCases(t, []clusterCase{
		{name: "no service", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.Service = nil }},
		{name: "ports in range", mutate: svc(func(s *v1alpha1.TiDBServiceSpec) {
			s.Port, s.MySQLNodePort, s.StatusNodePort = ptr[int32](4000), ptr(30000), ptr(0)
			s.AdditionalPorts = []corev1.ServicePort{{Port: 8080, NodePort: 32000}, {Port: 65535}}
		})},
		{name: "port zero", mutate: svc(func(s *v1alpha1.TiDBServiceSpec) { s.Port = ptr[int32](0) }),
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tidb.service.port"}}},
		{name: "port too large", mutate: svc(func(s *v1alpha1.TiDBServiceSpec) { s.Port = ptr[int32](70000) }),
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tidb.service.port"}}},
		{name: "node ports out of range", mutate: svc(func(s *v1alpha1.TiDBServiceSpec) { s.MySQLNodePort, s.StatusNodePort = ptr(-1), ptr(65536) }),
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.tidb.service.mysqlNodePort"}, {field.ErrorTypeInvalid, "spec.tidb.service.statusNodePort"}}},
		{name: "additional ports out of range", mutate: svc(func(s *v1alpha1.TiDBServiceSpec) {
			s.AdditionalPorts = []corev1.ServicePort{{Port: 0, NodePort: 70000}}
		}), want: []fieldErr{
			{field.ErrorTypeInvalid, "spec.tidb.service.additionalPorts[0].port"},
			{field.ErrorTypeInvalid, "spec.tidb.service.additionalPorts[0].nodePort"},
		}},
	})
}
