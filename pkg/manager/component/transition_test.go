package component_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// TestCheckLiveAgainstTheBuiltPD builds PD, then checks changed specs
// against its live StatefulSet and ConfigMap: what the update rules refuse
// is reported with its field, what they allow is not, and a spec that
// renders the recorded ConfigMap is checked from the caches alone.
func TestCheckLiveAgainstTheBuiltPD(t *testing.T) {
	t.Parallel()
	withConfig := func(items map[string]any) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.Config = v1alpha1.NewConfig(items) }
	}
	for _, tt := range []struct {
		name     string
		change   func(*v1alpha1.TidbCluster)
		wantPath string // "" when allowed
		wantMsg  string
		wantRead bool // the mounted ConfigMap's data is read from the API
	}{
		{"unchanged", func(*v1alpha1.TidbCluster) {}, "", "", false},
		{"replicas changed", func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.Replicas = 5 }, "", "", false},
		{"log level changed", withConfig(map[string]any{"log": map[string]any{"level": "warn"}}), "", "", true},
		{"config removed", func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.Config = nil }, "spec.pd.config",
			"spec.pd.config may not be removed once set: the pods run with ConfigMap basic-pd", false},
		{"schedule added", withConfig(map[string]any{"log": map[string]any{"level": "info"},
			"schedule": map[string]any{"leader-schedule-limit": 8}}), "spec.pd.config.schedule", "change it with pd-ctl", true},
		{"replication as TOML", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD.Config = mustConfig(t, "[log]\nlevel = 'info'\n[replication]\nmax-replicas = 5\n")
		}, "spec.pd.config.replication", "PD's replication config may not change", true},
		{"instance label changed", func(tc *v1alpha1.TidbCluster) { tc.Labels = map[string]string{label.InstanceLabelKey: "release"} },
			"metadata.labels[app.kubernetes.io/instance]", `built with instance "basic"`, true}, // its labels are in the hash
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			healthyPD(f.pd)
			_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
			f.seed(t)
			f.deps.FakeKube.ClearActions()
			tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
			tt.change(tc)

			errs := f.mgr.CheckLive(context.Background(), tc)
			if tt.wantPath == "" && len(errs) != 0 {
				t.Fatalf("want allowed, got %v", errs)
			}
			if tt.wantPath != "" && (len(errs) != 1 || errs[0].Field != tt.wantPath || !strings.Contains(errs[0].Error(), tt.wantMsg)) {
				t.Fatalf("want one error at %s with %q, got %v", tt.wantPath, tt.wantMsg, errs)
			}
			if read := len(f.deps.FakeKube.Actions()) > 0; read != tt.wantRead {
				t.Errorf("API read %v, want %v: %v", read, tt.wantRead, f.deps.FakeKube.Actions())
			}
			if w := writes(f.deps); len(w) != 0 {
				t.Errorf("CheckLive wrote: %v", w)
			}
		})
	}
}

// TestCheckLiveBeforeTheStatefulSet: nothing built, nothing to compare.
func TestCheckLiveBeforeTheStatefulSet(t *testing.T) {
	t.Parallel()
	f := newFixture()
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.Spec.PD.Config = nil
	tc.Labels = map[string]string{label.InstanceLabelKey: "release"}
	if errs := f.mgr.CheckLive(context.Background(), tc); len(errs) != 0 {
		t.Fatalf("want nothing to check, got %v", errs)
	}
}

func mustConfig(t *testing.T, toml string) *v1alpha1.Config {
	t.Helper()
	var c v1alpha1.Config
	if err := c.UnmarshalJSON([]byte(`"` + strings.ReplaceAll(toml, "\n", `\n`) + `"`)); err != nil || c.IsInvalid() {
		t.Fatalf("config %q: %v %s", toml, err, c.InvalidReason)
	}
	return &c
}

// TestCheckLiveRemembersOnlyWhatPassed: a check that passed is not
// repeated for the same versions of the cluster and its objects, and a new
// version of the cluster is checked again.
func TestCheckLiveRemembersOnlyWhatPassed(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	sets := f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer()
	for _, o := range sets.List() {
		sts := o.(*appsv1.StatefulSet).DeepCopy()
		sts.ResourceVersion = "7"
		mustAdd(t, sets.Update(sts))
	}
	cms := f.deps.KubeInformerFactory.Core().V1().ConfigMaps().Informer().GetIndexer()
	for _, o := range cms.List() {
		cm := o.(*corev1.ConfigMap).DeepCopy()
		cm.ResourceVersion = "8"
		mustAdd(t, cms.Update(cm))
	}
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.ResourceVersion = "1"
	if errs := f.mgr.CheckLive(context.Background(), tc); len(errs) != 0 {
		t.Fatalf("unchanged cluster: %v", errs)
	}
	changed := tc.DeepCopy()
	changed.Spec.PD.Config = nil
	if errs := f.mgr.CheckLive(context.Background(), changed); len(errs) != 0 {
		t.Fatalf("the same versions were checked again: %v", errs)
	}
	changed.ResourceVersion = "2"
	if errs := f.mgr.CheckLive(context.Background(), changed); len(errs) != 1 || errs[0].Field != "spec.pd.config" {
		t.Fatalf("a new version of the cluster: want spec.pd.config refused, got %v", errs)
	}
	if errs := f.mgr.CheckLive(context.Background(), changed); len(errs) != 1 {
		t.Fatalf("a refused version must be checked again, got %v", errs)
	}
}
