package apply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Owner is the custom resource an Applier writes for: it becomes the
// controller of every object applied for it, and the events of each write
// are recorded on it. Any kind of the pingcap.com API is one (TidbCluster,
// TidbMonitor, TidbDashboard, …); objects read from listers qualify
// although their TypeMeta is empty, because the kind is looked up by Go type.
type Owner interface {
	metav1.Object
	runtime.Object
}

// ownerScheme knows the Go types of the pingcap.com kinds.
var ownerScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}()

// ownerKind returns owner's group, version and kind. A type the API does
// not register (never the case for the operator's own callers) falls back
// to its TypeMeta, which may be empty.
func ownerKind(owner Owner) schema.GroupVersionKind {
	if gvks, _, err := ownerScheme.ObjectKinds(owner); err == nil && len(gvks) > 0 {
		return gvks[0]
	}
	return owner.GetObjectKind().GroupVersionKind()
}
