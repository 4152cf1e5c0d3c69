package apply

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
)

// TestAnnotateTidbCluster: set and removed keys reach the API and the
// object in memory, other annotations stay, an unchanged request sends
// nothing, and without a TidbCluster client the write fails with an event.
func TestAnnotateTidbCluster(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1",
		Annotations: map[string]string{"user": "x", "old": "y"}}}
	pc := fake.NewSimpleClientset(tc.DeepCopy())
	rec := record.NewFakeRecorder(10)
	a := NewApplier(kubefake.NewClientset(), rec, Caches{}).WithClusters(pc)
	ctx := context.Background()
	if err := a.AnnotateTidbCluster(ctx, tc, map[string]string{"new": "1"}, "old"); err != nil {
		t.Fatal(err)
	}
	live, err := pc.PingcapV1alpha1().TidbClusters("ns").Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []map[string]string{live.Annotations, tc.Annotations} {
		if len(got) != 2 || got["user"] != "x" || got["new"] != "1" {
			t.Errorf("annotations %v, want user=x new=1", got)
		}
	}
	pc.ClearActions()
	if err := a.AnnotateTidbCluster(ctx, tc, map[string]string{"new": "1"}, "old"); err != nil || len(pc.Actions()) != 0 {
		t.Errorf("an unchanged request: %v, actions %v; want nothing sent", err, pc.Actions())
	}
	noClient := NewApplier(kubefake.NewClientset(), rec, Caches{})
	if err := noClient.AnnotateTidbCluster(ctx, tc, map[string]string{"new": "2"}); err == nil {
		t.Error("want an error without a TidbCluster client")
	}
	if len(rec.Events) == 0 {
		t.Error("want a FailedPatch event")
	}
}
