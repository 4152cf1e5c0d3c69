package controller

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// internLimit bounds the strings an interner holds: past it the table
// starts again (strings handed out stay valid; only sharing is lost until
// the table refills), so names of long-deleted objects are not kept.
const internLimit = 1 << 16

// interner hands out one shared copy of each string it is given, so that
// the thousands of cached objects of the same kinds share their label
// keys and values, namespaces and owners instead of each holding its own
// decoded copy. Safe for concurrent use (every informer transforms on its
// own goroutine).
type interner struct {
	mu      sync.Mutex
	strings map[string]string
}

func (in *interner) intern(s string) string {
	if s == "" {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.strings[s]; ok {
		return v
	}
	if in.strings == nil || len(in.strings) >= internLimit {
		in.strings = make(map[string]string)
	}
	in.strings[s] = s
	return s
}

// cacheStrings is the interner of the informer transforms.
var cacheStrings = &interner{}

// internMeta makes m share its namespace, label keys and values,
// annotation keys and owner references with the other cached objects.
// Annotation values are left: they are mostly per object (hashes, JSON).
func internMeta(m metav1.Object) {
	in := cacheStrings
	m.SetNamespace(in.intern(m.GetNamespace()))
	if l := m.GetLabels(); len(l) > 0 {
		shared := make(map[string]string, len(l))
		for k, v := range l {
			shared[in.intern(k)] = in.intern(v)
		}
		m.SetLabels(shared)
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		shared := make(map[string]string, len(a))
		for k, v := range a {
			shared[in.intern(k)] = v
		}
		m.SetAnnotations(shared)
	}
	refs := m.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name = in.intern(r.APIVersion), in.intern(r.Kind), in.intern(r.Name)
		r.UID = types.UID(in.intern(string(r.UID)))
	}
}
