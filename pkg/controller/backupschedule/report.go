package backupschedule

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// reported is the last verdict of one reason recorded for an object.
type reported struct {
	uid        types.UID
	generation int64
	message    string
}

// reporter records an event about a schedule's spec once per generation
// and reason rather than on every sync: an invalid spec or an unsupported
// field is a fact of the spec, and a resync every 30s must not repeat it.
type reporter struct {
	recorder record.EventRecorder
	mu       sync.Mutex
	last     map[string]reported // "<ns>/<name>/<reason>" -> last recorded
}

func newReporter(recorder record.EventRecorder) *reporter {
	return &reporter{recorder: recorder, last: map[string]reported{}}
}

// once records an event of type eventType and reason on bs with message,
// unless the same message was recorded for this generation of this object.
func (r *reporter) once(bs *v1alpha1.BackupSchedule, eventType, reason, message string) {
	key := bs.Namespace + "/" + bs.Name + "/" + reason
	now := reported{uid: bs.UID, generation: bs.Generation, message: message}
	r.mu.Lock()
	last, seen := r.last[key]
	r.last[key] = now
	r.mu.Unlock()
	if seen && last == now {
		return
	}
	r.recorder.Event(bs, eventType, reason, message)
}

// clear forgets what was reported for reason on bs, so that a later
// occurrence is reported again (the spec was fixed, then broken again).
func (r *reporter) clear(bs *v1alpha1.BackupSchedule, reason string) {
	r.mu.Lock()
	delete(r.last, bs.Namespace+"/"+bs.Name+"/"+reason)
	r.mu.Unlock()
}

// forget drops everything reported for the schedule namespace/name (deleted).
func (r *reporter) forget(namespace, name string, reasons ...string) {
	r.mu.Lock()
	for _, reason := range reasons {
		delete(r.last, namespace+"/"+name+"/"+reason)
	}
	r.mu.Unlock()
}
