package tidbinitializer

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// reported is the last Warning recorded for an initializer.
type reported struct {
	uid        types.UID
	generation int64
	reason     string
	message    string
}

// reporter records a Warning about an initializer once per generation,
// reason and message rather than on every sync: a missing Secret stays
// missing across many syncs, and each would otherwise repeat it.
type reporter struct {
	recorder record.EventRecorder
	mu       sync.Mutex
	last     map[string]reported // "<ns>/<name>" -> last recorded
}

func newReporter(recorder record.EventRecorder) *reporter {
	return &reporter{recorder: recorder, last: map[string]reported{}}
}

// warnOnce records a Warning with reason and message on ti unless the same
// was the last recorded for this generation.
func (r *reporter) warnOnce(ti *v1alpha1.TidbInitializer, reason, message string) {
	key := ti.Namespace + "/" + ti.Name
	now := reported{uid: ti.UID, generation: ti.Generation, reason: reason, message: message}
	r.mu.Lock()
	last, seen := r.last[key]
	r.last[key] = now
	r.mu.Unlock()
	if seen && last == now {
		return
	}
	r.recorder.Event(ti, "Warning", reason, message)
}

// forget drops what was recorded for namespace/name (fixed or deleted), so
// that the next problem is recorded again.
func (r *reporter) forget(namespace, name string) {
	r.mu.Lock()
	delete(r.last, namespace+"/"+name)
	r.mu.Unlock()
}
