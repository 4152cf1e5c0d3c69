package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestMetadataOnlyCacheReadsTheServiceWholeBeforeAnUpdate: the cache holds
// an applied Service without its spec (StripApplied). A converged apply
// reads nothing from the API; a changed target port reads the Service once and
// keeps the cluster IP and the node port the API server allocated.
func TestMetadataOnlyCacheReadsTheServiceWholeBeforeAnUpdate(t *testing.T) {
	t.Parallel()
	a, kube, informers := newFakeApplier()
	ctx := context.Background()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	desired := func(target int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb", Namespace: "ns",
			Labels: map[string]string{"app.kubernetes.io/component": "tidb"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app.kubernetes.io/component": "tidb"},
				Ports: []corev1.ServicePort{{Name: "mysql-client", Port: 4000, TargetPort: intstr.FromInt32(target)}}}}
	}
	created, err := a.Service(ctx, owner, desired(4000))
	if err != nil {
		t.Fatal(err)
	}
	allocated := created.DeepCopy() // what the API server allocates
	allocated.Spec.ClusterIP, allocated.Spec.ClusterIPs = "10.0.0.7", []string{"10.0.0.7"}
	allocated.Spec.Ports[0].NodePort = 30123
	if _, err := kube.CoreV1().Services("ns").Update(ctx, allocated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cached := allocated.DeepCopy()
	if !StripApplied(cached) || cached.Spec.ClusterIP != "" || len(cached.Spec.Ports) != 0 {
		t.Fatalf("an applied Service was not stripped: %+v", cached.Spec)
	}
	if err := informers.Core().V1().Services().Informer().GetIndexer().Add(cached); err != nil {
		t.Fatal(err)
	}
	kube.ClearActions()
	if _, err := a.Service(ctx, owner, desired(4000)); err != nil {
		t.Fatal(err)
	}
	if n := len(kube.Actions()); n != 0 {
		t.Fatalf("a converged Service cost %d requests, want 0: %v", n, kube.Actions())
	}
	updated, err := a.Service(ctx, owner, desired(4001))
	if err != nil {
		t.Fatal(err)
	}
	if verbs := actionVerbs(kube.Actions()); verbs != "get,update" {
		t.Errorf("requests for a changed Service: %s, want get,update", verbs)
	}
	if updated.Spec.ClusterIP != "10.0.0.7" || updated.Spec.Ports[0].NodePort != 30123 || updated.Spec.Ports[0].TargetPort.IntVal != 4001 {
		t.Errorf("update lost what the API server set or the change: %+v", updated.Spec)
	}
}

// TestStripAppliedLeavesAnotherOperatorsObjectsWhole: an object without our
// hash (left by the TiDB Operator) is compared by meaning until replaced,
// so the cache keeps it whole.
func TestStripAppliedLeavesAnotherOperatorsObjectsWhole(t *testing.T) {
	t.Parallel()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "basic-discovery"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"pingcap.com"}, Resources: []string{"tidbclusters"}, Verbs: []string{"get"}}}}
	if StripApplied(role) || len(role.Rules) != 1 {
		t.Fatalf("a Role without our hash was stripped: %+v", role)
	}
	role.Annotations = map[string]string{AnnAppliedHash: "0123456789abcdef"}
	if !StripApplied(role) || role.Rules != nil {
		t.Fatalf("an applied Role kept its rules: %+v", role)
	}
	if StripApplied(&corev1.ConfigMap{ObjectMeta: role.ObjectMeta}) {
		t.Error("StripApplied claims a ConfigMap, which keeps its metadata and binary data")
	}
}

// actionVerbs lists the verbs of a fake clientset's actions.
func actionVerbs(actions []k8stesting.Action) string {
	verbs := make([]string, 0, len(actions))
	for _, a := range actions {
		verbs = append(verbs, a.GetVerb())
	}
	return strings.Join(verbs, ",")
}

// TestHashIsThatOfMarshal: the streamed hash equals the sha256 of
// json.Marshal's output, which every applied object's recorded hash was
// computed from, so no object is rewritten when the way it is computed
// changes.
func TestHashIsThatOfMarshal(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		map[string]string{"a": "<b>&\n", "c": "d"},
		corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0",
			Command: []string{"/bin/sh", "-c", "exec pd-server --config=/etc/pd/pd.toml\n"}}}}},
		"", 0, nil,
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		want := hex.EncodeToString(sum[:])[:16]
		if got, err := Hash(v); err != nil || got != want {
			t.Errorf("Hash(%#v) = %q, %v; want %q", v, got, err, want)
		}
	}
}
