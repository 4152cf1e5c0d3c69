package pd

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// metaFixture holds pod basic-pd-0 (on a node, with PVC pd-basic-pd-0
// bound to PV pv-0) and the unscheduled basic-pd-1, in the caches and the
// API alike.
type metaFixture struct {
	meta            *Meta
	kube            *kubefake.Clientset
	pods, pvcs, pvs cache.Indexer
	tc              *v1alpha1.TidbCluster
	objs            []runtime.Object
}

func newMetaFixture(t *testing.T) *metaFixture {
	t.Helper()
	nsIndex := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	f := &metaFixture{
		pods: cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex),
		pvcs: cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex),
		pvs:  cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		tc:   &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}},
	}
	f.tc.Status.ClusterID = "42"
	claim := corev1.Volume{Name: "pd", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pd-basic-pd-0"}}}
	objs := []struct {
		obj runtime.Object
		idx cache.Indexer
	}{
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-0", Namespace: "ns"},
			Spec: corev1.PodSpec{NodeName: "n0", Volumes: []corev1.Volume{claim}}}, f.pods},
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-1", Namespace: "ns"}}, f.pods},
		{&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pd-basic-pd-0", Namespace: "ns"},
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-0"}}, f.pvcs},
		{&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-0"}}, f.pvs},
	}
	for _, o := range objs {
		if err := o.idx.Add(o.obj); err != nil {
			t.Fatal(err)
		}
		f.objs = append(f.objs, o.obj)
	}
	f.kube = kubefake.NewClientset(f.objs...)
	rec := record.NewFakeRecorder(10)
	f.meta = NewMeta(&component.Env{Writer: apply.NewApplier(f.kube, rec, apply.Caches{}),
		Pods: corelisters.NewPodLister(f.pods), PVCs: corelisters.NewPersistentVolumeClaimLister(f.pvcs),
		PVs: corelisters.NewPersistentVolumeLister(f.pvs)})
	return f
}

// patches returns the merge patches sent, by resource/name.
func (f *metaFixture) patches(t *testing.T) map[string]map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]map[string]string{}
	for _, a := range f.kube.Actions() {
		p, ok := a.(k8stesting.PatchAction)
		if !ok {
			continue
		}
		var body struct {
			Metadata map[string]map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			t.Fatal(err)
		}
		out[p.GetResource().Resource+"/"+p.GetName()] = body.Metadata
	}
	return out
}

// TestMetaLabelsPodPVCAndPV: a scheduled PD pod, its PVC and its PV get
// cluster-id and member-id (the PVC and PV also the pod name); an
// unscheduled pod is left for later.
func TestMetaLabelsPodPVCAndPV(t *testing.T) {
	t.Parallel()
	f := newMetaFixture(t)
	if err := f.meta.SyncMembers(context.Background(), f.tc, map[string]string{"basic-pd-0": "7", "basic-pd-1": "8"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{label.ClusterIDLabelKey: "42", label.MemberIDLabelKey: "7"}
	got := f.patches(t)
	if len(got) != 3 {
		t.Fatalf("patches = %v, want the pod, its PVC and its PV", got)
	}
	if !maps.Equal(got["pods/basic-pd-0"]["labels"], want) {
		t.Errorf("pod labels patch = %v, want %v", got["pods/basic-pd-0"], want)
	}
	pvc := got["persistentvolumeclaims/pd-basic-pd-0"]
	if pvc["labels"][label.MemberIDLabelKey] != "7" || pvc["labels"][label.AnnPodNameKey] != "basic-pd-0" ||
		pvc["annotations"][label.AnnPodNameKey] != "basic-pd-0" {
		t.Errorf("PVC patch = %v, want member-id 7 and pod-name basic-pd-0 as label and annotation", pvc)
	}
	pv := got["persistentvolumes/pv-0"]
	if pv["labels"][label.ClusterIDLabelKey] != "42" || pv["labels"][label.MemberIDLabelKey] != "7" ||
		pv["annotations"][label.AnnPodNameKey] != "basic-pd-0" {
		t.Errorf("PV patch = %v, want cluster-id, member-id and the pod-name annotation", pv)
	}
}

// TestMetaLabelsNoWriteWhenPresent: objects that already carry the labels
// are not patched; nothing is written before PD told the cluster ID.
func TestMetaLabelsNoWriteWhenPresent(t *testing.T) {
	t.Parallel()
	f := newMetaFixture(t)
	ids := map[string]string{"basic-pd-0": "7"}
	if err := f.meta.SyncMembers(context.Background(), f.tc, ids); err != nil {
		t.Fatal(err)
	}
	// The caches catch up with the patched objects.
	for _, name := range []string{"basic-pd-0"} {
		p, _ := f.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
		_ = f.pods.Update(p)
	}
	pvc, _ := f.kube.CoreV1().PersistentVolumeClaims("ns").Get(context.Background(), "pd-basic-pd-0", metav1.GetOptions{})
	_ = f.pvcs.Update(pvc)
	pv, _ := f.kube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-0", metav1.GetOptions{})
	_ = f.pvs.Update(pv)
	f.kube.ClearActions()
	if err := f.meta.SyncMembers(context.Background(), f.tc, ids); err != nil {
		t.Fatal(err)
	}
	if got := f.patches(t); len(got) != 0 {
		t.Errorf("converged objects patched again: %v", got)
	}
	f.tc.Status.ClusterID = ""
	if err := f.meta.SyncStores(context.Background(), f.tc, map[string]string{"basic-pd-0": "1"}); err != nil || len(f.patches(t)) != 0 {
		t.Errorf("labels written without a cluster ID: err %v, patches %v", err, f.patches(t))
	}
}

// TestMetaWritesANewPVOnce: a PV no one labelled yet (so not in the PV
// cache) gets, in one patch, its member's IDs together with what the
// reclaim step would have written: the policy and the cache's labels.
func TestMetaWritesANewPVOnce(t *testing.T) {
	t.Parallel()
	f := newMetaFixture(t)
	if err := f.pvs.Delete(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-0"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.meta.SyncMembers(context.Background(), f.tc, map[string]string{"basic-pd-0": "7"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "patch" && a.GetResource().Resource == "persistentvolumes" {
			n++
		}
	}
	pv, err := f.kube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain ||
		pv.Labels[label.ManagedByLabelKey] != label.TiDBOperator || pv.Labels[label.NamespaceLabelKey] != "ns" ||
		pv.Labels[label.MemberIDLabelKey] != "7" || pv.Annotations[label.AnnPodNameKey] != "basic-pd-0" {
		t.Errorf("%d PV patches; PV policy %q labels %v annotations %v: want one patch with Retain, the cache's labels and the IDs",
			n, pv.Spec.PersistentVolumeReclaimPolicy, pv.Labels, pv.Annotations)
	}
}
