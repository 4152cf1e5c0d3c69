package tidbcluster

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// TestMissingClusterPermissionsAreNamed checks that a namespaced operator
// without the chart's clusterPermissions names, in Unsupported and one
// Warning per generation, each feature it cannot run and the chart value
// that grants it; with every permission held nothing is named.
func TestMissingClusterPermissionsAreNamed(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cli := controller.DefaultCLIConfig()
	cli.ClusterScoped, cli.DetectNodeFailure = false, true
	cli.ApplyClusterPermissions(controller.ClusterPermissions{})
	comps := []Component{newStatefulStub(t, "pd"), newStatefulStub(t, "tikv"), newStatefulStub(t, "tidb")}
	control := NewDefaultControl(comps, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil).(*defaultControl)
	control.cli = cli

	got, err := syncOnce(t, deps, control, "basic")
	if err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterUnsupported)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Unsupported = %+v, want True", cond)
	}
	for _, want := range []string{"topology labels", "--detect-node-failure", component.NodePermission,
		"spec.pvReclaimPolicy", component.PersistentVolumePermission, "PVC growth", component.StorageClassPermission} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("Unsupported message lacks %q: %s", want, cond.Message)
		}
	}
	if ev := <-deps.FakeRecorder.Events; !strings.HasPrefix(ev, "Warning Unsupported") || !strings.Contains(ev, component.StorageClassPermission) {
		t.Errorf("event %q", ev)
	}
	if _, err := syncOnce(t, deps, control, "basic"); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-deps.FakeRecorder.Events:
		t.Errorf("a resync repeated the Warning: %q", ev)
	default:
	}

	cli.ClusterScoped = true // cluster-scoped holds every permission
	cli.ManagePersistentVolumes = true
	cli.ApplyClusterPermissions(controller.ClusterPermissions{})
	if names := deniedFeatures(cli, got); len(names) != 0 {
		t.Errorf("cluster-scoped operator names %v", names)
	}
}
