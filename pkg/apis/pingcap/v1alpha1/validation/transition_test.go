package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// liveTC is a cluster with PD and TiDB; mutate changes it for a case.
func liveTC(mutate func(*v1alpha1.TidbCluster)) *v1alpha1.TidbCluster {
	name := "init-sql"
	tc := &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{
			PD:   &v1alpha1.PDSpec{Replicas: 3},
			TiDB: &v1alpha1.TiDBSpec{Replicas: 2, BootstrapSQLConfigMapName: &name},
		},
	}
	if mutate != nil {
		mutate(tc)
	}
	return tc
}

func strPtr(s string) *string { return &s }

func TestValidateLive(t *testing.T) {
	t.Parallel()
	schedule := map[string]any{"schedule": map[string]any{"leader-schedule-limit": int64(4)}, "log": map[string]any{"level": "info"}}
	for _, tt := range []struct {
		name     string
		tc       *v1alpha1.TidbCluster
		live     Live
		wantPath string // "" when valid
		wantMsg  string
	}{
		{"nothing built yet", liveTC(nil), Live{Component: "pd"}, "", ""},
		{"same instance", liveTC(nil), Live{Component: "pd", Instance: "basic"}, "", ""},
		{"instance label added", liveTC(func(tc *v1alpha1.TidbCluster) { tc.Labels = map[string]string{instanceLabel: "other"} }),
			Live{Component: "pd", Instance: "basic"}, "metadata.labels[app.kubernetes.io/instance]", `built with instance "basic"`},
		{"instance label removed", liveTC(nil), Live{Component: "tikv", Instance: "helm-release"},
			"metadata.labels[app.kubernetes.io/instance]", `tikv objects were built with instance "helm-release"`},
		{"instance label kept", liveTC(func(tc *v1alpha1.TidbCluster) { tc.Labels = map[string]string{instanceLabel: "helm-release"} }),
			Live{Component: "pd", Instance: "helm-release"}, "", ""},
		{"config removed", liveTC(nil), Live{Component: "tikv", ConfigMap: "basic-tikv-3a4b5c6"},
			"spec.tikv.config", "spec.tikv.config may not be removed once set: the pods run with ConfigMap basic-tikv-3a4b5c6"},
		{"TiCDC config removed", liveTC(nil), Live{Component: "ticdc", ConfigMap: "basic-ticdc-3a4b5c6"}, "", ""},
		{"config kept", liveTC(nil), Live{Component: "tikv", ConfigMap: "basic-tikv-3a4b5c6", RendersConfig: true}, "", ""},
		{"config set later", liveTC(nil), Live{Component: "tikv", RendersConfig: true}, "", ""},
		{"bootstrap SQL changed", liveTC(nil), Live{Component: "tidb", BootstrapSQL: "first-sql"},
			"spec.tidb.bootstrapSQLConfigMapName", MsgBootstrapSQLChanged},
		{"bootstrap SQL kept", liveTC(nil), Live{Component: "tidb", BootstrapSQL: "init-sql"}, "", ""},
		{"bootstrap SQL removed", liveTC(func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.BootstrapSQLConfigMapName = nil }),
			Live{Component: "tidb", BootstrapSQL: "init-sql"}, "", ""},
		{"bootstrap SQL emptied", liveTC(func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.BootstrapSQLConfigMapName = strPtr("") }),
			Live{Component: "tidb", BootstrapSQL: "init-sql"}, "", ""},
		{"bootstrap SQL set later", liveTC(nil), Live{Component: "tidb"}, "", ""},
		{"PD schedule changed", liveTC(nil), Live{Component: "pd", MountedConfig: schedule,
			DesiredConfig: map[string]any{"schedule": map[string]any{"leader-schedule-limit": int64(8)}, "log": map[string]any{"level": "info"}}},
			"spec.pd.config.schedule", "PD's schedule config " + MsgPDConfigImmutable},
		{"PD replication added", liveTC(nil), Live{Component: "pd", MountedConfig: schedule,
			DesiredConfig: map[string]any{"schedule": schedule["schedule"], "replication": map[string]any{"max-replicas": int64(5)}}},
			"spec.pd.config.replication", "PD's replication config"},
		{"PD log changed", liveTC(nil), Live{Component: "pd", MountedConfig: schedule,
			DesiredConfig: map[string]any{"schedule": map[string]any{"leader-schedule-limit": int64(4)}, "log": map[string]any{"level": "warn"}}}, "", ""},
		{"TiKV sections of the same names are free", liveTC(nil), Live{Component: "tikv", RendersConfig: true,
			MountedConfig: schedule, DesiredConfig: map[string]any{}}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateLive(tt.tc, tt.live)
			if tt.wantPath == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tt.wantPath || !strings.Contains(errs[0].Error(), tt.wantMsg) {
				t.Fatalf("want one error at %s with %q, got %v", tt.wantPath, tt.wantMsg, errs)
			}
		})
	}
}
