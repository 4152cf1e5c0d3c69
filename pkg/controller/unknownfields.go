package controller

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// ReasonUnknownFields is the reason of the Warning event (and, for a
// TidbCluster, of the Degraded condition) naming the fields of a spec that
// the Kubernetes types it embeds do not know: the CRD leaves those types
// open, so the API server stored the fields, and reading drops them.
const ReasonUnknownFields = "UnknownFields"

// UnknownFieldsMessage is the text that names fields, JSON paths such as
// spec.tikv.affinity.nodeAfinity, for events and conditions.
func UnknownFieldsMessage(fields []string) string {
	return "ignored, unknown to their Kubernetes type (misspelt?): " + strings.Join(fields, ", ")
}

// UnknownFieldsObject is an object of this API whose decoder lists the
// unknown fields of its spec (v1alpha1's GetUnknownFields).
type UnknownFieldsObject interface {
	runtime.Object
	GetUID() types.UID
	GetGeneration() int64
	GetUnknownFields() []string
}

// maxReported bounds the reporter's memory: past it the memory starts anew,
// and an object still carrying unknown fields is reported once more.
const maxReported = 4096

// UnknownFieldsReporter records, once per generation of each object and
// per process, a Warning event naming the unknown fields of its spec. It is
// safe for concurrent use; make one with NewUnknownFieldsReporter.
type UnknownFieldsReporter struct {
	recorder record.EventRecorder
	mu       sync.Mutex
	reported map[types.UID]int64 // the generation last reported, of objects with unknown fields
}

// NewUnknownFieldsReporter returns a reporter that records through recorder.
func NewUnknownFieldsReporter(recorder record.EventRecorder) *UnknownFieldsReporter {
	return &UnknownFieldsReporter{recorder: recorder, reported: map[types.UID]int64{}}
}

// Report records the Warning event for obj when its spec has unknown
// fields and this generation of it was not reported yet, and returns the
// message ("" for none) for a condition. It never fails and never stops a
// sync: the rest of the spec is acted on.
func (r *UnknownFieldsReporter) Report(obj UnknownFieldsObject) string {
	fields := obj.GetUnknownFields()
	uid, gen := obj.GetUID(), obj.GetGeneration()
	r.mu.Lock()
	last, seen := r.reported[uid]
	switch {
	case len(fields) == 0:
		delete(r.reported, uid)
	case len(r.reported) >= maxReported && !seen:
		r.reported = map[types.UID]int64{uid: gen}
	default:
		r.reported[uid] = gen
	}
	r.mu.Unlock()
	if len(fields) == 0 {
		return ""
	}
	msg := UnknownFieldsMessage(fields)
	if !seen || last != gen {
		r.recorder.Eventf(obj, corev1.EventTypeWarning, ReasonUnknownFields, "%s", msg)
	}
	return msg
}
