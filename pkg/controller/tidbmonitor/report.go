package tidbmonitor

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// reported is the last verdict of one reason recorded for a monitor.
type reported struct {
	uid        types.UID
	generation int64
	message    string
}

// reporter records an event about a monitor's spec once per generation
// and reason: a resync must not repeat a fact of the spec.
type reporter struct {
	recorder record.EventRecorder
	mu       sync.Mutex
	last     map[string]reported // "<ns>/<name>/<reason>" -> last recorded
}

func newReporter(recorder record.EventRecorder) *reporter {
	return &reporter{recorder: recorder, last: map[string]reported{}}
}

// once records an event on tm unless the same message was recorded for
// this generation of this object.
func (r *reporter) once(tm *v1alpha1.TidbMonitor, eventType, reason, message string) {
	key := tm.Namespace + "/" + tm.Name + "/" + reason
	now := reported{uid: tm.UID, generation: tm.Generation, message: message}
	r.mu.Lock()
	last, seen := r.last[key]
	r.last[key] = now
	r.mu.Unlock()
	if (seen && last == now) || r.recorder == nil {
		return
	}
	r.recorder.Event(tm, eventType, reason, message)
}

// clear forgets reason for tm, so that it is reported again if it recurs.
func (r *reporter) clear(tm *v1alpha1.TidbMonitor, reason string) {
	r.mu.Lock()
	delete(r.last, tm.Namespace+"/"+tm.Name+"/"+reason)
	r.mu.Unlock()
}

// forget drops everything reported for the monitor namespace/name (deleted).
func (r *reporter) forget(namespace, name string) {
	r.mu.Lock()
	for _, reason := range []string{ReasonFailedValidation, ReasonUnsupported, ReasonSecretNotFound, ReasonConfigMapNotFound} {
		delete(r.last, namespace+"/"+name+"/"+reason)
	}
	r.mu.Unlock()
}
